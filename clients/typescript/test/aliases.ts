/**
 * Fails to compile when an alias of src/index.ts no longer resolves (a path, method or field
 * renamed in openapi.yaml makes it `never`).
 */
import type * as api from "../src/index.js";

type Resolves<T> = [T] extends [never] ? "never" : "ok";

export const aliasesResolve: Record<string, "ok"> = {
  Pack: "ok" satisfies Resolves<api.Pack>,
  PackDetail: "ok" satisfies Resolves<api.PackDetail>,
  Price: "ok" satisfies Resolves<api.Price>,
  Purchase: "ok" satisfies Resolves<api.Purchase>,
  PurchaseStatus: "ok" satisfies Resolves<api.PurchaseStatus>,
  OpenedItem: "ok" satisfies Resolves<api.OpenedItem>,
  CompletedPurchase: "ok" satisfies Resolves<api.CompletedPurchase>,
  PaymentRequest: "ok" satisfies Resolves<api.PaymentRequest>,
  MyItem: "ok" satisfies Resolves<api.MyItem>,
  LedgerEntry: "ok" satisfies Resolves<api.LedgerEntry>,
  TopUp: "ok" satisfies Resolves<api.TopUp>,
  ApiError: "ok" satisfies Resolves<api.ApiError>,
};
