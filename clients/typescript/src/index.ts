/**
 * fan-api's typed client for the app: openapi-fetch over the types that openapi-typescript
 * generates from the repository's openapi.yaml (`npm run gen` writes src/schema.d.ts), so every
 * path, parameter, request and answer body is checked by tsc.
 *
 * The aliases below are derived from paths, methods and fields rather than from the document's
 * component names, which a regeneration of openapi.yaml may rename.
 */
import createClient, { type Client, type ClientOptions, type Middleware } from "openapi-fetch";
import type { paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

type Method = "get" | "put" | "post" | "delete" | "patch";
/** The methods `path` has an operation for (the others are `?: never` in the schema). */
type MethodOf<P extends keyof paths> = {
  [M in Method]: paths[P][M] extends undefined ? never : M;
}[Method];
type Operation<P extends keyof paths, M extends MethodOf<P>> = NonNullable<paths[P][M]>;
type Responses<P extends keyof paths, M extends MethodOf<P>> =
  Operation<P, M> extends { responses: infer R } ? R : never;

// The constraints make a path, method or status that the document no longer has a compile error
// here rather than a `never` alias.
/** The JSON body that `method` on `path` answers with `status`. */
export type JsonAnswer<P extends keyof paths, M extends MethodOf<P>, S extends keyof Responses<P, M>> =
  Responses<P, M>[S] extends { content: { "application/json": infer Body } } ? Body : never;

/** The JSON body that `method` on `path` takes. */
export type JsonRequest<P extends keyof paths, M extends MethodOf<P>> =
  Operation<P, M> extends { requestBody?: { content: { "application/json": infer Body } } } ? Body : never;

/** A pack as listed (`GET /api/packs`). */
export type Pack = JsonAnswer<"/api/packs", "get", 200>["packs"][number];
/** One pack with its items and fairness commitment (`GET /api/packs/{packId}`). */
export type PackDetail = JsonAnswer<"/api/packs/{packId}", "get", 200>["pack"];
/** An amount in minor units (cents) and its ISO 4217 currency. */
export type Price = Pack["price"];
export type Purchase = JsonAnswer<"/api/packs/{packId}/purchases/{purchaseId}", "get", 200>["purchase"];
export type PurchaseStatus = Purchase["status"];
/** One slot of an opened purchase. */
export type OpenedItem = NonNullable<Purchase["items"]>[number];
/** The paid purchase and the Cash balance left (`PUT` of a purchase). */
export type CompletedPurchase = JsonAnswer<"/api/packs/{packId}/purchases/{purchaseId}", "put", 200>;
export type PaymentRequest = JsonRequest<"/api/packs/{packId}/purchases/{purchaseId}", "put">;
/** An item the fan pulled (`GET /api/me/items`). */
export type MyItem = JsonAnswer<"/api/me/items", "get", 200>["items"][number];
/** One line of the fan's Cash ledger (`GET /api/me/cash/transactions`). */
export type LedgerEntry = JsonAnswer<"/api/me/cash/transactions", "get", 200>["transactions"][number];
export type TopUp = JsonAnswer<"/api/me/cash/top-ups", "post", 201>["topUp"];
/** Every refusal's body: `{"success": false, "error": {"code", "message"}}`. */
export type ApiError = JsonAnswer<"/api/packs/{packId}", "get", 404>;

export type FanApiClient = Client<paths>;

/**
 * A session token, or a function asked for the current one before each request (so a refreshed
 * token is used, and none is sent while signed out).
 */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface FanApiClientOptions extends Omit<ClientOptions, "baseUrl"> {
  token?: TokenSource;
}

/** A client of the API at `baseUrl` (e.g. `http://127.0.0.1:3000`), signed in when given a token. */
export function createFanApiClient(
  baseUrl: string,
  { token, ...options }: FanApiClientOptions = {},
): FanApiClient {
  const client = createClient<paths>({ ...options, baseUrl });
  if (token !== undefined) {
    client.use(bearer(token));
  }
  return client;
}

function bearer(token: TokenSource): Middleware {
  return {
    async onRequest({ request }) {
      const value = typeof token === "function" ? await token() : token;
      if (value) {
        request.headers.set("Authorization", `Bearer ${value}`);
      }
      return request;
    },
  };
}
