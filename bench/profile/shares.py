#!/usr/bin/env python3
"""Shares of a warm function's CPU by who spends it, from `perf script` output (stdin).

Each sample goes to the group of the innermost frame of its stack (perf lists the leaf first)
that belongs to one: token verification; the AWS SDK; log lines; the Lambda runtime; our own code
(the `shared` crate); hyper. A sample with no such frame (the tokio scheduler,
epoll, the kernel) is "the rest". So work a library does for a caller (serde_json, the allocator)
counts to the caller: our own code is everything our code runs that is not a call into the SDK,
the token library, logging, the runtime or hyper. It is what issue 17 holds to at most 25% of a
warm invocation's CPU.

    perf record -F 4999 --call-graph dwarf -p PID -- sleep 15
    perf script | bench/profile/shares.py
"""

import re
import sys

GROUPS = [
    ("token verification", re.compile(r"jsonwebtoken|shared::auth::")),
    ("the SDK's calls", re.compile(r"aws_sdk_dynamodb|aws_smithy|aws_sigv4|aws_runtime|aws_types|aws_credential")),
    ("log lines", re.compile(r"tracing_subscriber|shared::telemetry|tracing_core")),
    ("Lambda runtime and lambda_http", re.compile(r"lambda_runtime|lambda_http|aws_lambda_events")),
    # The `shared` crate (not `core::...::shared::`); a function crate holds only `main`, whose
    # frames are the tokio runtime's loop, so they count to the rest.
    ("our own code", re.compile(r"(?<![:\w])shared::|serde_dynamo")),
    ("hyper connection tasks", re.compile(r"\bhyper|hyper_util|h2::")),
]
REST = "the rest (tokio, allocator, kernel)"


def samples(lines):
    stack = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if stack:
                yield stack
            stack = []
        elif line.startswith(("\t", " ")):
            stack.append(line)
        else:
            stack = []
    if stack:
        yield stack


def group_of(stack):
    for frame in stack:
        for name, pattern in GROUPS:
            if pattern.search(frame):
                return name
    return REST


def main():
    counts = {name: 0 for name, _ in GROUPS}
    counts[REST] = 0
    total = 0
    for stack in samples(sys.stdin):
        total += 1
        counts[group_of(stack)] += 1
    print(f"{total} samples")
    for name, count in counts.items():
        print(f"| {name} | {100 * count / max(total, 1):.1f}% |")


if __name__ == "__main__":
    main()
