use super::*;

const BASE: [(&str, &str); 2] = [
    ("AUTH_ISSUER", "https://issuer.example"),
    ("AUTH_JWKS_URL", "https://issuer.example/jwks"),
];

#[test]
fn auth_defaults() {
    let config = AuthConfig::from_source(&BASE).unwrap();
    assert_eq!(config.email_claim, "email");
    assert_eq!(config.audience, None);
    assert_eq!(config.leeway, Duration::from_secs(30));
    assert_eq!(config.jwks_min_refresh, Duration::from_secs(30));
    assert_eq!(
        config.jwks,
        JwksSetting::Url("https://issuer.example/jwks".into())
    );
}

#[test]
fn missing_issuer_names_the_variable() {
    let error = AuthConfig::from_source(&[("AUTH_JWKS", "{}")]).unwrap_err();
    assert!(error.to_string().contains("AUTH_ISSUER"), "{error}");
    let error = AuthConfig::from_source(&[("AUTH_ISSUER", "x")]).unwrap_err();
    assert!(error.to_string().contains("AUTH_JWKS_URL"), "{error}");
}

#[test]
fn jwks_url_must_be_https_unless_loopback() {
    for ok in [
        "https://a.example/jwks",
        "http://127.0.0.1:9000/jwks",
        "http://localhost:1/x",
        "http://[::1]:8/k",
    ] {
        let source = [("AUTH_ISSUER", "i"), ("AUTH_JWKS_URL", ok)];
        assert!(AuthConfig::from_source(&source).is_ok(), "{ok}");
    }
    for bad in [
        "http://a.example/jwks",
        "http://10.0.0.1/jwks",
        "ftp://a/b",
        "not a url",
        "http://127.0.0.1.evil.example/",
    ] {
        let source = [("AUTH_ISSUER", "i"), ("AUTH_JWKS_URL", bad)];
        assert!(AuthConfig::from_source(&source).is_err(), "{bad}");
    }
}

#[test]
fn numbers_are_range_checked() {
    let source = [
        ("AUTH_ISSUER", "i"),
        ("AUTH_JWKS", "{}"),
        ("AUTH_LEEWAY_SECONDS", "301"),
    ];
    assert!(AuthConfig::from_source(&source).is_err());
    let source = [
        ("AUTH_ISSUER", "i"),
        ("AUTH_JWKS", "{}"),
        ("AUTH_LEEWAY_SECONDS", "5"),
        ("AUTH_JWKS_MIN_REFRESH_SECONDS", "7"),
    ];
    let config = AuthConfig::from_source(&source).unwrap();
    assert_eq!(
        (config.leeway.as_secs(), config.jwks_min_refresh.as_secs()),
        (5, 7)
    );
    assert_eq!(max_body_bytes(&[("MAX_BODY_BYTES", "100")]).unwrap(), 100);
    assert_eq!(
        max_body_bytes(&[("X", "1")]).unwrap(),
        DEFAULT_MAX_BODY_BYTES
    );
    assert!(max_body_bytes(&[("MAX_BODY_BYTES", "-1")]).is_err());
    assert_eq!(hold_policy(&[("X", "1")]).unwrap(), HoldPolicy::default());
    assert_eq!(
        hold_policy(&[
            ("MAX_UNPAID_HOLDS", "1000"),
            ("START_REQUIRES_FUNDS", "true")
        ])
        .unwrap(),
        HoldPolicy {
            max_unpaid: 1000,
            requires_funds: true
        }
    );
    for bad in [
        [("MAX_UNPAID_HOLDS", "0"), ("START_REQUIRES_FUNDS", "false")],
        [
            ("MAX_UNPAID_HOLDS", "1001"),
            ("START_REQUIRES_FUNDS", "false"),
        ],
        [("MAX_UNPAID_HOLDS", "2"), ("START_REQUIRES_FUNDS", "yes")],
    ] {
        assert!(hold_policy(&bad).is_err(), "{bad:?}");
    }
    assert_eq!(purchase_hold(&[("X", "1")]).unwrap().as_secs(), 600);
    assert_eq!(
        purchase_hold(&[("PURCHASE_HOLD_SECONDS", "3600")])
            .unwrap()
            .as_secs(),
        3600
    );
    for bad in ["0", "3601", "ten"] {
        assert!(purchase_hold(&[("PURCHASE_HOLD_SECONDS", bad)]).is_err());
    }
}

#[test]
fn the_receipt_key_is_required_long_and_never_shown() {
    assert!(matches!(
        queue_receipt_signer(&[]),
        Err(ConfigError::Missing {
            name: "QUEUE_RECEIPT_KEY",
            ..
        })
    ));
    let short = "s".repeat(MIN_RECEIPT_KEY_LEN - 1);
    let error = queue_receipt_signer(&[("QUEUE_RECEIPT_KEY", short.as_str())]).unwrap_err();
    assert!(!error.to_string().contains(&short), "never shown: {error}");
    let key = "k".repeat(MIN_RECEIPT_KEY_LEN);
    let signer = queue_receipt_signer(&[("QUEUE_RECEIPT_KEY", key.as_str())]).unwrap();
    let seed = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, key.as_bytes());
    assert_eq!(
        signer.public_key(),
        ReceiptSigner::from_seed(seed.as_ref())
            .unwrap()
            .public_key()
    );
}

#[test]
fn rate_limits_default_and_are_overridden_per_class() {
    assert_eq!(rate_policy(&[("X", "")]).unwrap(), RatePolicy::default());
    let policy = rate_policy(&[("RATE_LIMIT_START", "fan=2/5,addr=9/5")]).unwrap();
    assert_eq!((policy.start.fan.quota, policy.start.address.quota), (2, 9));
    assert_eq!(policy.read, RatePolicy::default().read);
    let error = rate_policy(&[("RATE_LIMIT_READ", "fan=2")]).unwrap_err();
    assert!(error.to_string().contains("RATE_LIMIT_READ"), "{error}");
}

#[test]
fn cursor_secret_is_required_and_long_enough() {
    assert!(matches!(
        cursor_secret(&[("X", "")]),
        Err(ConfigError::Missing {
            name: "CURSOR_SECRET",
            ..
        })
    ));
    assert!(cursor_secret(&[("CURSOR_SECRET", "short")]).is_err());
    assert_eq!(
        cursor_secret(&[("CURSOR_SECRET", "k".repeat(32).as_str())])
            .unwrap()
            .len(),
        32
    );
}

#[test]
fn score_weights_default_and_replace_by_rarity() {
    let defaults = score_weights(&[]).unwrap();
    assert_eq!(defaults.of("legendary"), 250);
    let set = score_weights(&[("SCORE_WEIGHTS", "legendary=500")]).unwrap();
    assert_eq!((set.of("legendary"), set.of("rare")), (500, 10));
    assert!(matches!(
        score_weights(&[("SCORE_WEIGHTS", "legendary")]),
        Err(ConfigError::Invalid {
            name: "SCORE_WEIGHTS",
            ..
        })
    ));
}

#[test]
fn table_name_is_required_and_valid() {
    assert!(matches!(
        table_name(&[("X", "")]),
        Err(ConfigError::Missing {
            name: "TABLE_NAME",
            ..
        })
    ));
    assert!(table_name(&[("TABLE_NAME", "ab")]).is_err());
    assert!(table_name(&[("TABLE_NAME", "bad name")]).is_err());
    assert_eq!(table_name(&[("TABLE_NAME", "fan-api")]).unwrap(), "fan-api");
}
#[test]
fn stripe_settings_default_fail_fast_and_never_show_a_secret() {
    let api = stripe_api(&[("STRIPE_SECRET_KEY", "sk_test_abc")]).unwrap();
    assert_eq!(api.base, DEFAULT_STRIPE_API_BASE);
    assert!(!format!("{api:?}").contains("sk_test_abc"), "{api:?}");
    let error = stripe_api(&[("X", "")]).unwrap_err();
    assert!(error.to_string().contains("STRIPE_SECRET_KEY"), "{error}");
    for (base, ok) in [
        ("http://127.0.0.1:9/", true),
        ("https://stripe.example", true),
        ("http://stripe.example", false),
        ("ftp://127.0.0.1", false),
    ] {
        let source = [("STRIPE_SECRET_KEY", "k"), ("STRIPE_API_BASE", base)];
        assert_eq!(stripe_api(&source).is_ok(), ok, "{base}");
    }
    let error = stripe_webhook_secret(&[("X", "")]).unwrap_err();
    assert!(
        error.to_string().contains("STRIPE_WEBHOOK_SECRET"),
        "{error}"
    );
    let secret = stripe_webhook_secret(&[("STRIPE_WEBHOOK_SECRET", "whsec_x")]).unwrap();
    assert_eq!(secret.expose(), "whsec_x");
    assert!(!format!("{secret:?}").contains("whsec_x"));
}

#[test]
fn top_up_settings_have_defaults_and_bounds() {
    let policy = top_up_policy(&[("X", "")]).unwrap();
    assert_eq!(policy, TopUpPolicy::default());
    let policy = top_up_policy(&[
        ("TOPUP_MIN_AMOUNT", "1"),
        ("TOPUP_MAX_AMOUNT", "9"),
        ("TOPUP_CURRENCIES", "USD, EUR"),
    ])
    .unwrap();
    assert_eq!((policy.min_amount, policy.max_amount), (1, 9));
    assert_eq!(policy.currencies, ["USD", "EUR"]);
    for bad in [
        [("TOPUP_MIN_AMOUNT", "10"), ("TOPUP_MAX_AMOUNT", "9")],
        [("TOPUP_MIN_AMOUNT", "0"), ("TOPUP_CURRENCIES", "USD")],
        [("TOPUP_CURRENCIES", "usd"), ("X", "")],
    ] {
        assert!(top_up_policy(&bad).is_err(), "{bad:?}");
    }
    assert!(top_up_return_urls(&[("TOPUP_SUCCESS_URL", "https://a.example/ok")]).is_err());
    let urls = top_up_return_urls(&[
        ("TOPUP_SUCCESS_URL", "https://a.example/ok"),
        ("TOPUP_CANCEL_URL", "http://localhost:3000/no"),
    ])
    .unwrap();
    assert_eq!(urls.cancel, "http://localhost:3000/no");
}

#[test]
fn a_clock_runs_ahead_only_where_a_test_says_so() {
    assert_eq!(clock_skew(&[("X", "1")]), Ok(0));
    assert_eq!(clock_skew(&[("CLOCK_SKEW_SECONDS", "310")]), Ok(310));
    for bad in ["-5", "86401", "soon"] {
        assert!(clock_skew(&[("CLOCK_SKEW_SECONDS", bad)]).is_err(), "{bad}");
    }
    // A deployed function's clock is the system's: the template never sets it.
    assert!(!include_str!("../../../../template.yaml").contains("CLOCK_SKEW_SECONDS"));
}
