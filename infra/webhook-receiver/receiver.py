"""A local webhook receiver for fan-api's events (docs/events.md): verifies each delivery with
the Standard Webhooks specification's own library (PyPI `standardwebhooks`), prints what it got,
and says when a subject's sequence skips or repeats, as a consumer should check. Answers 204 to a
delivery it verified, 400 to one it did not; `--fail N` answers 500 to the first N (to watch the
retries), `--gone` answers 410 (the API disables the endpoint).

    scripts/webhook-receiver --secret whsec_... [--secret whsec_...] [--port 8787]
"""

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--secret", action="append", required=True,
                        help="an endpoint secret (whsec_...); twice during a rotation")
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--fail", type=int, default=0, help="answer 500 to the first N")
    parser.add_argument("--gone", action="store_true", help="answer 410 to every delivery")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    hooks = [Webhook(secret) for secret in args.secret]
    last = {}
    failures = {"left": args.fail}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def answer(self, status):
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {name.lower(): value for name, value in self.headers.items()}
            if not any(verifies(hook, body, headers) for hook in hooks):
                print(f"REFUSED {headers.get('webhook-id')}: no secret verifies it", flush=True)
                return self.answer(400)
            event = json.loads(body)
            subject = (event["subject"]["kind"], event["subject"]["id"])
            expected = last.get(subject, 0) + 1
            note = ""
            if event["sequence"] < expected:
                note = " (again: already seen)"
            elif event["sequence"] > expected:
                note = f" (GAP: expected {expected}; catch up from the feed)"
            last[subject] = max(last.get(subject, 0), event["sequence"])
            print(f"{event['type']} {event['id']} {subject[0]}:{subject[1]} "
                  f"#{event['sequence']}{note} {json.dumps(event['data'])}", flush=True)
            if args.gone:
                return self.answer(410)
            if failures["left"] > 0:
                failures["left"] -= 1
                return self.answer(500)
            return self.answer(204)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"webhook receiver on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


def verifies(hook, body, headers):
    try:
        hook.verify(body, headers)
        return True
    except WebhookVerificationError:
        return False


if __name__ == "__main__":
    main(sys.argv[1:])
