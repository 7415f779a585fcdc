"""moto_server whose TransactWriteItems snapshots only the items a transaction names, and whose
index Query sorts only the items of the partition it asks for.

moto rolls a cancelled transaction back by deep-copying the whole table before every action, so
each transaction costs time in proportion to the table (1.6 s for four actions on a table of
4,500 items, measured): a drop of thousands of buyers could not run. This launcher keeps moto's
own transaction code and changes only what that copy holds: the table's key structure copied
(cheap) and deep copies of the items the transaction names, the only items its actions can
change. Restoring that snapshot undoes exactly what restoring the whole copy would undo.
testkit's `key_rollback` tests show a cancelled transaction leaving every item as it was.

moto answers a Query on an index by sorting every item of the table, then keeping those of the
asked partition: its cost grows with the table, and a drop's sold-out starts (each looking for
run-out holds on the hold index) slowed to minutes once rate counters doubled the table. Here
that sort sees only the items whose index hash attributes equal the query's: the same items, in
the same order, for what moto keeps next.

moto ignores TransactWriteItems' ClientRequestToken, which DynamoDB honours: a call repeating a
succeeded call's token within 10 minutes succeeds without changing anything (and one with other
parameters is refused with IdempotentParameterMismatchException). The SDK fills the token in and
keeps it across its retries, so a retry after a lost or failed answer (a timeout on a loaded
machine) is answered as applied by DynamoDB; stock moto runs it again and cancels it on the
conditions the first try already made false. This launcher keeps the succeeded tokens as DynamoDB
does; a call waits for another one carrying its token to end (DynamoDB would answer
TransactionInProgressException, which the caller retries: the same outcome, later).

Usage: python key_rollback.py -H 127.0.0.1 -p PORT (moto_server's own arguments).
"""

import copy
import hashlib
import inspect
import json
import sys
import threading
import time
from collections import defaultdict, deque

import moto.dynamodb.models as models
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.core.responses import ActionResult
from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler
from moto.server import main

_real_deepcopy = copy.deepcopy
_named = threading.local()


def _snapshot(table):
    """The table as it is, sharing every item but the ones the transaction names. Only the
    named keys' rows are copied: the transaction's actions change nothing else. (Copying the
    outer dict keeps its stored hashes: moto's key type hashes slowly.)"""
    snap = copy.copy(table)
    items = table.items.copy()
    for hash_key, range_key in _named.keys.get(table.name, ()):
        if hash_key not in table.items:
            continue
        if table.has_range_key:
            row = items[hash_key]
            if row is table.items[hash_key]:
                row = items[hash_key] = dict(row)
            if range_key in row and row[range_key] is table.items[hash_key][range_key]:
                row[range_key] = _real_deepcopy(row[range_key])
        else:
            items[hash_key] = _real_deepcopy(table.items[hash_key])
    snap.items = items
    return snap


class _Copy:
    """The `copy` module as moto's models see it: `deepcopy` of a table inside a transaction
    takes the snapshot above; everything else is the real module."""

    def __getattr__(self, name):
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value, memo=None):
        if isinstance(value, Table) and getattr(_named, "keys", None) is not None:
            return _snapshot(value)
        return _real_deepcopy(value, memo)


_transact = models.DynamoDBBackend.transact_write_items


def _keys_of(backend, transact_items):
    keys = defaultdict(list)
    for entry in transact_items:
        _, op = next(iter(entry.items()))
        name = op.get("TableName")
        if name not in backend.tables:
            continue
        table = backend.tables[name]
        source = op["Item"] if "Item" in op else op.get("Key", {})
        if table.hash_key_attr not in source:
            continue
        hash_key = DynamoType(source[table.hash_key_attr])
        range_key = None
        if table.range_key_attr is not None and table.range_key_attr in source:
            range_key = DynamoType(source[table.range_key_attr])
        keys[name].append((hash_key, range_key))
    return keys


_all_items = Table.all_items
_query = Table.query


def _equal(attribute, value):
    # An item without the attribute is outside the index (DynamoType cannot compare to None).
    return attribute is not None and attribute == value


def all_items(self):
    conditions = getattr(_named, "index_hash", None)
    if not conditions:
        return _all_items(self)
    items = [
        item
        for hash_set in self.items.values()
        for item in (hash_set.values() if self.range_key_attr else (hash_set,))
        if all(_equal(item.attrs.get(name), value) for name, value in conditions)
    ]
    return sorted(
        items,
        key=lambda x: (x.hash_key, x.range_key) if x.range_key else x.hash_key,
    )


_query_parameters = inspect.signature(_query)


def query(self, *args, **kwargs):
    asked = _query_parameters.bind(self, *args, **kwargs).arguments
    if asked.get("index_name") and asked.get("hash_key_conditions"):
        _named.index_hash = asked["hash_key_conditions"]
    try:
        return _query(self, *args, **kwargs)
    finally:
        _named.index_hash = None


def transact_write_items(self, transact_items):
    _named.keys = _keys_of(self, transact_items)
    try:
        return _transact(self, transact_items)
    finally:
        _named.keys = None


# DynamoDB keeps a client request token for 10 minutes after the call that used it completed.
_TOKEN_SECONDS = 600
_tokens_lock = threading.Lock()
# token -> [digest of the call's other parameters, completed at (monotonic) or None, lock]
_tokens = {}
_expiry = deque()
_handler_transact = DynamoHandler.transact_write_items


class IdempotentParameterMismatch(DynamodbException):
    def __init__(self):
        super().__init__(
            ERROR_TYPE_PREFIX + "IdempotentParameterMismatchException",
            "The request uses the same client token as a previous, but non-identical request.",
        )


def _token_entry(token, digest):
    """The entry of `token` (forgetting expired ones first), created for `digest` if new."""
    now = time.monotonic()
    with _tokens_lock:
        while _expiry and now - _expiry[0][0] >= _TOKEN_SECONDS:
            _, old = _expiry.popleft()
            entry = _tokens.get(old)
            if entry is not None and entry[1] is not None and now - entry[1] >= _TOKEN_SECONDS:
                del _tokens[old]
        entry = _tokens.get(token)
        if entry is None:
            entry = _tokens[token] = [digest, None, threading.Lock()]
        return entry


def handler_transact_write_items(self):
    token = self.body.get("ClientRequestToken")
    if token is None:
        return _handler_transact(self)
    others = {name: value for name, value in self.body.items() if name != "ClientRequestToken"}
    # Binary attributes arrive as bytes: their repr is as exact as their bytes.
    digest = hashlib.sha256(json.dumps(others, sort_keys=True, default=repr).encode()).hexdigest()
    entry = _token_entry(token, digest)
    with entry[2]:
        if entry[0] != digest:
            raise IdempotentParameterMismatch()
        if entry[1] is not None:
            return ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})
        result = _handler_transact(self)
        completed = time.monotonic()
        with _tokens_lock:
            entry[1] = completed
            _expiry.append((completed, token))
        return result


models.copy = _Copy()
models.DynamoDBBackend.transact_write_items = transact_write_items
DynamoHandler.transact_write_items = handler_transact_write_items
Table.all_items = all_items
Table.query = query

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
