/**
 * scripts/local's flow through the typed client, against a local-api this test starts: list the
 * packs, start a purchase, pay it, open it, then the fan's purchases, items and ledger; a cosmetic
 * ordered with Cash and shown.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";

import { createFanApiClient, type Purchase, type PurchaseStatus } from "../src/index.js";
import { LocalApi } from "./local-api.js";

const PACK_ID = "nba-rookie-2026";
// local-api credits this user 10000 minor units of each currency at start.
const DEMO_USER = "demo-user";

let api: LocalApi;
before(async () => {
  api = await LocalApi.start();
});
after(async () => {
  await api?.stop();
});

/** The body of a 2xx answer with the expected status, or a failure naming the refusal. */
function answered<T>(
  step: string,
  expected: number,
  { data, error, response }: { data?: T; error?: unknown; response: Response },
): T {
  assert.equal(response.status, expected, `${step}: ${JSON.stringify(error ?? data)}`);
  assert.ok(data !== undefined, `${step}: no body`);
  return data;
}

function assertStatus(purchase: Purchase, status: PurchaseStatus, step: string): void {
  assert.equal(purchase.status, status, `${step}: ${JSON.stringify(purchase)}`);
}

test("scripts/local's flow: list, start, pay, open, then the fan's view", async () => {
  const client = createFanApiClient(api.base, { token: await api.token(DEMO_USER) });

  const listed = answered("list packs", 200, await client.GET("/api/packs"));
  const pack = listed.packs.find((p) => p.id === PACK_ID);
  assert.ok(pack, `${PACK_ID} is listed: ${listed.packs.map((p) => p.id).join(", ")}`);

  const balance = async (): Promise<number> => {
    const cash = answered("cash", 200, await client.GET("/api/me/cash"));
    return cash.balances.find((b) => b.currency === pack.price.currency)?.amount ?? 0;
  };
  const before = await balance();

  const path = { packId: PACK_ID };
  const start = {
    params: { path, header: { "Idempotency-Key": randomUUID() } },
    body: { clientSeed: "my lucky seed 42" },
  };
  const started = await client.POST("/api/packs/{packId}/purchases", start);
  const { purchase: reserved } = answered("start", 201, started);
  assertStatus(reserved, "reserved", "start");
  assert.equal(reserved.packId, PACK_ID);
  assert.deepEqual(reserved.price, pack.price);
  assert.equal(started.response.headers.get("location"), `/api/packs/${PACK_ID}/purchases/${reserved.id}`);
  // The same key answers the same purchase.
  const replayed = await client.POST("/api/packs/{packId}/purchases", start);
  assert.equal(answered("start again", 201, replayed).purchase.id, reserved.id);
  assert.equal(replayed.response.headers.get("idempotent-replayed"), "true");

  const purchasePath = { params: { path: { ...path, purchaseId: reserved.id } } };
  const paid = answered(
    "pay",
    200,
    await client.PUT("/api/packs/{packId}/purchases/{purchaseId}", {
      ...purchasePath,
      body: { payment: { method: "cash" } },
    }),
  );
  assertStatus(paid.purchase, "completed", "pay");
  assert.deepEqual(paid.cash.balance, { amount: before - pack.price.amount, currency: pack.price.currency });
  const read = answered("read", 200, await client.GET("/api/packs/{packId}/purchases/{purchaseId}", purchasePath));
  assertStatus(read.purchase, "completed", "read after paying");

  const unopened = answered(
    "paid, not opened",
    200,
    await client.GET("/api/me/purchases", { params: { query: { status: "completed" } } }),
  );
  assert.deepEqual(
    unopened.purchases.map((p) => p.id),
    [reserved.id],
  );

  const { purchase: opened } = answered(
    "open",
    200,
    await client.POST("/api/packs/{packId}/purchases/{purchaseId}/open", purchasePath),
  );
  assertStatus(opened, "opened", "open");
  assert.equal(opened.items?.length, pack.itemsPerPack, "itemsPerPack items drawn");

  const mine = answered(
    "my opened purchases",
    200,
    await client.GET("/api/me/purchases", { params: { query: { status: "opened" } } }),
  );
  assert.equal(mine.purchases.length, 1);
  assert.equal(mine.purchases[0]?.id, reserved.id);
  assert.deepEqual(mine.purchases[0]?.items, opened.items);
  assert.equal(mine.nextCursor, null);

  const items = answered("my items", 200, await client.GET("/api/me/items"));
  assert.equal(items.items.length, pack.itemsPerPack);
  for (const item of items.items) {
    assert.equal(item.purchaseId, reserved.id);
    assert.equal(item.packId, PACK_ID);
    assert.equal(item.openedAt, opened.openedAt);
  }
  assert.deepEqual(
    items.items.map(({ slot, itemId, name, rarity, imageUrl }) => ({ slot, itemId, name, rarity, imageUrl })),
    opened.items,
  );

  // The price left the balance, and the ledger says so: newest first, the debit.
  assert.equal(await balance(), before - pack.price.amount);
  const ledger = answered("my ledger", 200, await client.GET("/api/me/cash/transactions"));
  assert.deepEqual(
    ledger.transactions[0] && {
      type: ledger.transactions[0].type,
      amount: ledger.transactions[0].amount,
      currency: ledger.transactions[0].currency,
      purchaseId: ledger.transactions[0].purchaseId,
    },
    { type: "debit", amount: pack.price.amount, currency: pack.price.currency, purchaseId: reserved.id },
  );
});

test("a cosmetic bought with Cash, once, and shown on the profile", async () => {
  const client = createFanApiClient(api.base, { token: await api.token(DEMO_USER) });
  const listed = answered(
    "list cosmetics",
    200,
    await client.GET("/api/products", { params: { query: { type: "cosmetic" } } }),
  );
  const frame = listed.products.find((p) => p.id === "frame-gold");
  assert.ok(frame, `frame-gold is listed: ${listed.products.map((p) => p.id).join(", ")}`);
  assert.deepEqual(frame.grants, { kind: "cosmetic", slot: "avatar_frame" });

  const order = {
    params: { path: { productId: frame.id }, header: { "Idempotency-Key": randomUUID() } },
    body: { pay: "cash" as const, currency: "USD" },
  };
  const placed = answered("order", 201, await client.POST("/api/products/{productId}/orders", order));
  assert.equal(placed.order.status, "completed");
  assert.deepEqual(placed.order.price, frame.prices[0]);
  const again = await client.POST("/api/products/{productId}/orders", order);
  assert.equal(answered("order again", 201, again).order.id, placed.order.id);
  assert.equal(again.response.headers.get("idempotent-replayed"), "true");

  const shown = answered(
    "equip",
    200,
    await client.PUT("/api/me/cosmetics", { body: { avatarFrame: frame.id } }),
  );
  assert.equal(shown.cosmetics.avatarFrame, frame.id);
  const me = answered("me", 200, await client.GET("/api/me"));
  assert.deepEqual(me.cosmetics, shown.cosmetics);
  const orders = answered("my orders", 200, await client.GET("/api/me/orders"));
  assert.deepEqual(
    orders.orders.map((o) => o.id),
    [placed.order.id],
  );
});

test("a refusal is typed as the API's error", async () => {
  const { error, response } = await createFanApiClient(api.base).GET("/api/me/items");
  assert.equal(response.status, 401);
  assert.deepEqual(error && { success: error.success, code: error.error.code }, {
    success: false,
    code: "missing_token",
  });
});
