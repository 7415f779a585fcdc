//! The Lambda glue's own rules (crates/lambda): the DynamoDB client a cold start builds, and
//! what the runtime makes of a request's host and query.

mod aws {
    use lambda::aws::*;

    #[test]
    fn lambda_client_needs_region_and_credentials_and_names_what_is_missing() {
        let full = [
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ACCESS_KEY_ID", "id"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
        ];
        let dynamodb = lambda_dynamodb_client(&full).unwrap();
        assert_eq!(
            dynamodb.client.config().region().map(|r| r.as_ref()),
            Some("eu-west-1")
        );
        assert_eq!(
            dynamodb.endpoint,
            "https://dynamodb.eu-west-1.amazonaws.com"
        );
        for missing in ["AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] {
            let mut partial = full;
            partial
                .iter_mut()
                .find(|(name, _)| *name == missing)
                .unwrap()
                .1 = "";
            let error = lambda_dynamodb_client(&partial).unwrap_err();
            assert!(error.to_string().contains(missing), "{error}");
        }
    }

    #[test]
    fn a_local_table_is_on_a_loopback_host() {
        for endpoint in [
            "http://127.0.0.1:8000",
            "http://localhost:8000",
            "http://[::1]:8000",
        ] {
            assert_eq!(
                local_dynamodb_endpoint(&[("AWS_ENDPOINT_URL_DYNAMODB", endpoint)]).as_deref(),
                Ok(endpoint)
            );
        }
        for endpoint in [
            "https://dynamodb.eu-west-1.amazonaws.com",
            "http://10.0.0.5:8000",
            "http://127.0.0.1.example.com:8000",
            "not a url",
        ] {
            let error = local_dynamodb_endpoint(&[("AWS_ENDPOINT_URL", endpoint)]).unwrap_err();
            assert!(
                error.to_string().contains("loopback"),
                "{endpoint}: {error}"
            );
        }
        let error = local_dynamodb_endpoint(&[("AWS_REGION", "eu-west-1")]).unwrap_err();
        assert!(
            error.to_string().contains("AWS_ENDPOINT_URL_DYNAMODB"),
            "{error}"
        );
    }

    #[test]
    fn the_dynamodb_endpoint_variable_wins_over_the_general_one() {
        assert_eq!(dynamodb_endpoint(&[("X", "")]), None);
        assert_eq!(
            dynamodb_endpoint(&[("AWS_ENDPOINT_URL", "http://a")]).as_deref(),
            Some("http://a")
        );
        let both = [
            ("AWS_ENDPOINT_URL", "http://a"),
            ("AWS_ENDPOINT_URL_DYNAMODB", "http://b"),
        ];
        assert_eq!(dynamodb_endpoint(&both).as_deref(), Some("http://b"));
    }
}

mod runtime {
    use lambda::runtime::*;

    #[test]
    fn a_scheme_or_host_that_makes_no_uri_is_replaced() {
        for host in ["example.com:99999", "[::1", "a%zz", "a b", ""] {
            assert!(!makes_a_uri(host), "{host}");
        }
        for host in ["example.com", "example.com:8443", "[::1]:3000", "127.0.0.1"] {
            assert!(makes_a_uri(host), "{host}");
        }
    }

    #[test]
    fn bytes_a_uri_cannot_hold_are_encoded_and_the_rest_kept() {
        for (raw, expected) in [
            ("limit=5&cursor=ab-_.~", "limit=5&cursor=ab-_.~"),
            ("cursor=%22x%22", "cursor=%22x%22"),
            ("cursor=\"x\"", "cursor=%22x%22"),
            ("limit=5 ", "limit=5%20"),
            (
                "a=<b>&c={d}|`^\\[e]#",
                "a=%3Cb%3E&c=%7Bd%7D%7C%60%5E%5C%5Be%5D%23",
            ),
            ("name=caf\u{e9}", "name=caf%C3%A9"),
        ] {
            let mut query = raw.to_owned();
            encode_outside_uri(&mut query);
            assert_eq!(query, expected, "{raw}");
            let uri = format!("https://example.com/api/packs?{query}");
            assert!(uri.parse::<lambda_http::http::Uri>().is_ok(), "{uri}");
        }
    }
}
