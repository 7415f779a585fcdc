//! local-api's parts on their own: the siteverify stand-in, the banner, the demo line.

mod siteverify {
    use http_body_util::BodyExt;
    use serde_json::Value;

    use local_api::siteverify::*;

    async fn asked(form: &'static str) -> Value {
        let body = answer(bytes::Bytes::from(form)).await.into_body();
        serde_json::from_slice(&body.collect().await.unwrap().to_bytes()).unwrap()
    }

    #[tokio::test]
    async fn answers_as_cloudflares_test_secrets_with_the_action_a_local_token_names() {
        let passed =
            asked("secret=1x0000000000000000000000000000000AA&response=join_drop.DUMMY.TOKEN.XXXX")
                .await;
        assert_eq!(passed["success"], true);
        assert_eq!(passed["action"], "join_drop");
        assert_eq!(passed["hostname"], HOSTNAME);
        let failed =
            asked("secret=2x0000000000000000000000000000000AA&response=XXXX.DUMMY.TOKEN.XXXX")
                .await;
        assert_eq!(failed["error-codes"][0], "invalid-input-response");
        let spent =
            asked("secret=3x0000000000000000000000000000000AA&response=XXXX.DUMMY.TOKEN.XXXX")
                .await;
        assert_eq!(spent["error-codes"][0], "timeout-or-duplicate");
        let other = asked("secret=0x4AAAA&response=XXXX.DUMMY.TOKEN.XXXX").await;
        assert_eq!(other["error-codes"][0], "invalid-input-secret");
        let missing = asked("secret=1x0000000000000000000000000000000AA").await;
        assert_eq!(missing["error-codes"][0], "missing-input-response");
    }
}

mod banner {
    use domain::timestamp::Timestamp;
    use local_api::banner::*;

    const TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJkZW1vLXVzZXIifQ.c2ln";

    fn banner(balances: &str) -> String {
        Banner {
            base: "http://127.0.0.1:3000",
            store: "in memory",
            routes: 37,
            key_dir: "/tmp/fan-api",
            webhook_secret: "whsec_x",
            operator_key: "opk_local_x",
            webhooks: &[],
            webhook_retry_scale: 60,
            token: TOKEN,
            balances,
            demo_line: Some((
                "nba-all-star-2027",
                Timestamp::parse("2026-11-28T20:15:00Z").unwrap(),
            )),
            cors_origins: "http://localhost:5173",
        }
        .text()
    }

    #[test]
    fn the_token_is_printed_once_and_the_curl_lines_use_it_as_a_variable() {
        for balances in ["10000 USD", ""] {
            let text = banner(balances);
            assert_eq!(text.matches(TOKEN).count(), 1, "{text}");
            assert!(text.contains(&format!("export TOKEN='{TOKEN}'")), "{text}");
            assert!(text.starts_with("fan-api local API on http://127.0.0.1:3000\n"));
            // Short enough to read at once (the operators' key and webhooks took two more).
            assert!(text.lines().count() <= 22, "{text}");
            for curl in text
                .lines()
                .filter(|line| line.contains("-H \"Authorization"))
            {
                assert!(curl.contains(r#""Authorization: Bearer $TOKEN""#), "{curl}");
            }
        }
        let with_cash = banner("10000 USD");
        assert!(with_cash.contains("Cash: 10000 USD"), "{with_cash}");
        assert!(with_cash.contains("my-first-buy"), "{with_cash}");
        assert!(!banner("").contains("my-first-buy"));
    }

    #[test]
    fn the_demo_line_says_when_it_closes() {
        let text = banner("");
        assert!(
            text.contains("nba-all-star-2027's line is open until 2026-11-28T20:15:00Z"),
            "{text}"
        );
    }
}

mod demo_queue {
    use domain::queue::terms::Phase;
    use domain::timestamp::Timestamp;
    use local_api::demo_queue::*;

    #[test]
    fn the_shipped_queued_pack_opens_now_and_keeps_valid_terms() {
        let mut packs = domain::packs::seed::parse_seed(include_bytes!("../../seed/packs.json"))
            .expect("the shipped seed");
        let before = packs.clone();
        let now = Timestamp::now();
        open_at(&mut packs, now, DEFAULT_OPEN_SECONDS);
        let demo = packs.iter().find(|p| p.id == "nba-all-star-2027").unwrap();
        let terms = demo.queue.expect("the demo pack is queued");
        assert_eq!(terms.phase_at(now), Phase::Open);
        let closes = now.plus_seconds(DEFAULT_OPEN_SECONDS).unwrap();
        assert_eq!(terms.phase_at(closes), Phase::Closed);
        assert_eq!(terms.validate(demo.sale_starts_at), Ok(()));
        assert!(demo.sale_ends_at > demo.sale_starts_at);
        // Packs without a line are untouched.
        for (moved, shipped) in packs.iter().zip(&before) {
            if shipped.queue.is_none() {
                assert_eq!(moved, shipped);
            }
        }
    }
}
