//! The products beyond packs, public and cacheable like the catalogue (issue 48):
//! `GET /api/products?type=` and `GET /api/products/{productId}`. One function (`products`)
//! serves both: they read the `PRODUCTS` partition, nothing else.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Path, ProductPath, QueryParams};
use crate::http::paging::{
    ListCursor, ListLimit, PageJson, cursor, invalid_query, limit, next_cursor,
};
use crate::http::refusals::{PRODUCT_NOT_FOUND, find_product};
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::{examples, responses as doc};
use crate::views::products::ProductJson;
use domain::ids::ProductId;
use domain::packs::listing::{CursorSigner, DEFAULT_LIMIT};
use domain::products::ProductType;
use domain::timestamp::Timestamp;
use store::products::{GetProduct, ListProducts};

/// What the products' handlers need: the store and the cursors' signer (`CURSOR_SECRET`).
pub struct ProductsState<S> {
    pub store: S,
    pub cursors: CursorSigner,
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for ProductsState<S> {
    fn local(store: &S, _process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            cursors: CursorSigner::random(),
        }
    }
}

/// `?type=&limit=&cursor=`, checked in that order; the cursor as sent.
#[derive(Debug)]
pub struct ProductsQuery {
    pub product_type: Option<ProductType>,
    pub limit: usize,
    pub cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for ProductsQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let product_type = query
            .single("type")?
            .map(|text| {
                text.parse::<ProductType>().map_err(|_| {
                    invalid_query("The 'type' parameter must be cash_bundle or cosmetic.")
                })
            })
            .transpose()?;
        Ok(Self {
            product_type,
            limit: limit(&query, DEFAULT_LIMIT)?,
            cursor: query.single("cursor")?,
        })
    }
}

/// The `type` filter of `GET /api/products` (read by [`ProductsQuery`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProductsFilter {
    /// Only the products of this type.
    #[param(rename = "type", inline)]
    pub product_type: Option<ProductType>,
}

/// A page of products.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ProductPage)]
struct Products<'a> {
    products: Vec<ProductJson<'a>>,
}

type ProductPage<'a> = PageJson<Products<'a>>;

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ProductAnswer<'a> {
    product: ProductJson<'a>,
}

/// The products on sale or coming, by id.
#[utoipa::path(
    get,
    path = "/api/products",
    operation_id = "listProducts",
    tag = "Products",
    summary = "List the products: Cash bundles and cosmetics",
    description = "The products a fan can buy besides packs, by `id`: `cash_bundle`s (Cash in a \
currency, plus a bonus that is Cash like any other; paid by card) and `cosmetic`s (an avatar \
frame, a locker-room theme or a badge, shown on the fan's profile and locker room once equipped). \
A product whose sale has ended, or that is archived, is not listed; one whose sale starts later is \
(`saleStartsAt`). Each names its prices per currency in minor units, what it `grants`, how it may \
be paid (`pay`), and its per-fan limit and stock when it has them. Pages: pass the previous \
page's `nextCursor` as `cursor`, with the same `type`; a page may hold fewer than `limit` \
products (ended ones are skipped) and `nextCursor` is null on the last.",
    security(),
    params(ProductsFilter, ListLimit, ListCursor),
    responses(
        (status = 200, description = "A page of products.", body = ProductPage,
            examples(("page" = (value = json!(examples::product_page()))))),
        (status = 400, response = doc::BadRequest),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn list_products<S: ListProducts>(
    State(state): State<Arc<ProductsState<S>>>,
    query: ProductsQuery,
) -> Result<Response, ApiError> {
    let type_name: &str = query.product_type.map(Into::into).unwrap_or_default();
    let scope = ["products", type_name];
    let after = cursor(
        &state.cursors,
        query.cursor.as_deref(),
        &scope,
        |position| ProductId::parse(position).ok(),
    )?;
    let page = state
        .store
        .list_products(query.product_type, query.limit, after.as_ref())
        .await?;
    let now = Timestamp::now();
    let products = page
        .entries
        .iter()
        .filter(|product| product.listed_at(now))
        .map(ProductJson::of)
        .collect();
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
            entries: Products { products },
        },
    ))
}

/// One product.
#[utoipa::path(
    get,
    path = "/api/products/{productId}",
    operation_id = "getProduct",
    tag = "Products",
    summary = "Get one product",
    description = "A product as listed; one whose sale has ended, or archived, is 404 \
`product_not_found` (a fan's orders keep its name, price and grant).",
    security(),
    params(ProductPath),
    responses(
        (status = 200, description = "The product.", body = ProductAnswer,
            examples(("product" = (value = json!({"product": examples::product()}))))),
        (status = 404, description = "No listed product has this id (`product_not_found`); or \
the id is not an id (`not_found`).", body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::error_example(ErrorCode::ProductNotFound, PRODUCT_NOT_FOUND)))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn get_product<S: GetProduct>(
    State(state): State<Arc<ProductsState<S>>>,
    Path(ProductPath { product_id }): Path<ProductPath>,
) -> Result<Response, ApiError> {
    let product = find_product(&state.store, &product_id).await?;
    Ok(json_response(
        StatusCode::OK,
        &ProductAnswer {
            product: ProductJson::of(&product),
        },
    ))
}
