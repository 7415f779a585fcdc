//! What `local-api` prints as it starts: where everything is, the demo user's token once (as a
//! line to paste into a shell), and a few curl lines that use it as `$TOKEN`.

use domain::timestamp::Timestamp;

/// What the banner tells.
pub struct Banner<'a> {
    /// `http://127.0.0.1:<port>`: the first line ends with it (the tests read it there).
    pub base: &'a str,
    pub store: &'a str,
    pub routes: usize,
    /// Where the local identity provider keeps its key.
    pub key_dir: &'a str,
    pub webhook_secret: &'a str,
    /// The key the operators' routes accept ([`crate::operator`]).
    pub operator_key: &'a str,
    /// The endpoints `LOCAL_API_WEBHOOK_URLS` named, each with its secret.
    pub webhooks: &'a [(String, String)],
    /// What webhook retries' waits are divided by (1: the real schedule).
    pub webhook_retry_scale: u32,
    /// The demo user's session token.
    pub token: &'a str,
    /// The demo user's Cash (`10000 CAD, ...`); empty when they have none (`--dynamodb`), and
    /// then no purchase lines are suggested.
    pub balances: &'a str,
    /// The demo's waiting room, when local-api opened one: the pack and its line's close.
    pub demo_line: Option<(&'a str, Timestamp)>,
    /// The origins whose browsers may call the API (`http://localhost:5173, ...`; empty: none).
    pub cors_origins: &'a str,
}

impl Banner<'_> {
    /// The text, each line ended by `\n`.
    pub fn text(&self) -> String {
        let Self { base, token, .. } = self;
        let mut out = String::new();
        let mut line = |text: String| {
            out.push_str(&text);
            out.push('\n');
        };
        line(format!("fan-api local API on {base}"));
        line(format!("  store: {}", self.store));
        line(format!(
            "  API: {} routes, described at {base}/openapi.json and shown at {base}/docs; \
             docs/api.md walks through them with curl",
            self.routes
        ));
        let origins = match self.cors_origins {
            "" => "none",
            origins => origins,
        };
        line(format!(
            "  CORS, as API Gateway answers it: browsers on {origins} may call the API ({})",
            crate::cors::ORIGINS_VAR
        ));
        line(
            "  rate limits: per fan and per connection's address, RATE_LIMIT_* or the defaults \
             (docs/rate-limits.md); a 429 says when to retry"
                .into(),
        );
        line(format!(
            "  identity provider: local ({base}/.well-known/jwks.json, key in {}); a token for \
             anyone: scripts/local token --sub ID [--email ADDR]",
            self.key_dir
        ));
        line(format!(
            "  Stripe: the local Checkout ({base}{}/v1/checkout/sessions); webhook signing secret {} ({})",
            crate::checkout::STRIPE_PATH,
            self.webhook_secret,
            crate::checkout::WEBHOOK_SECRET_VAR
        ));
        line(format!(
            "  operators (IAM when deployed): -H 'Authorization: Bearer {}' ({}), e.g. for \
             {base}/api/events",
            self.operator_key,
            crate::operator::OPERATOR_KEY_VAR,
        ));
        let retries = match self.webhook_retry_scale {
            1 => "the real schedule (5 s, 5 min, 30 min, ...)".to_owned(),
            scale => format!("the schedule divided by {scale}"),
        };
        line(format!(
            "  webhooks: every event, signed, to the endpoints operators create \
             (POST {base}/api/webhooks/endpoints) or {} names, retried on {retries} ({}); \
             scripts/webhook-receiver verifies them (docs/events.md)",
            crate::webhooks::URLS_VAR,
            crate::webhooks::RETRY_SCALE_VAR,
        ));
        for (url, secret) in self.webhooks {
            line(format!("    {url}: secret {secret}"));
        }
        line(format!(
            "  human check: NOT Cloudflare. A local siteverify stand-in ({base}{}) with \
             Cloudflare's always-pass test secret {}: a queue's join passes with \
             'Human-Check: join_<packId>.DUMMY.TOKEN.<any tail>', each token once \
             (docs/human-check.md)",
            crate::siteverify::PATH,
            crate::siteverify::SECRET
        ));
        if let Some((pack, closes_at)) = self.demo_line {
            line(format!(
                "  waiting room: {pack}'s line is open until {closes_at}, drawn about 5 minutes \
                 later ({} sets how long it stays open; each start opens a fresh line)",
                crate::demo_queue::OPEN_SECONDS_VAR
            ));
        }
        line(String::new());
        let cash = match self.balances {
            "" => String::new(),
            balances => format!("; Cash: {balances}"),
        };
        line(format!(
            "demo-user's token (valid 24 h{cash}). Paste this line into your shell, for the lines \
             below and docs/api.md:"
        ));
        line(format!("export TOKEN='{token}'"));
        line(String::new());
        line("Try:".into());
        let auth = r#"-H "Authorization: Bearer $TOKEN""#;
        line(format!("  curl -s {base}/api/packs"));
        line(format!("  curl -s {base}/api/dashboard {auth}"));
        if !self.balances.is_empty() {
            let purchases = format!("{base}/api/packs/nba-rookie-2026/purchases");
            line(format!(
                "  curl -s -X POST {purchases} {auth} -H 'Idempotency-Key: my-first-buy'"
            ));
            line(format!(
                "  curl -s -X PUT {purchases}/<id from the answer> {auth} \
                 -H 'Content-Type: application/json' -d '{{\"payment\":{{\"method\":\"cash\"}}}}'"
            ));
            line(format!("  curl -s -X POST {purchases}/<id>/open {auth}"));
        }
        line(
            "More (quests, top-ups, your profile and locker room, leaderboards, the queued drop): \
             docs/api.md"
                .into(),
        );
        out
    }
}
