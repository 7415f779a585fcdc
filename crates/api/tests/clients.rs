//! The outbound clients' own rules (crates/clients): the roots they trust, what a refusal keeps.

mod http_client {
    use clients::http_client::*;
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    #[test]
    fn the_embedded_amazon_roots_all_load() {
        let certificates: Vec<_> = CertificateDer::pem_slice_iter(AMAZON_ROOTS)
            .collect::<Result<_, _>>()
            .unwrap();
        // Amazon Root CA 1-4 and Starfield Services Root CA - G2.
        assert_eq!(certificates.len(), 5);
        let mut store = rustls::RootCertStore::empty();
        let (added, ignored) = store.add_parsable_certificates(certificates);
        assert_eq!((added, ignored), (5, 0));
        // And the connector builds on them.
        let _ = https_connector(Roots::Amazon, Schemes::HttpsOnly, None);
    }
}

mod stripe {
    use clients::stripe::*;

    #[test]
    fn a_refusal_keeps_type_and_code_but_never_the_message() {
        let body = br#"{"error":{"type":"invalid_request_error","code":"api_key_expired","message":"Expired API Key provided: sk_test_****abcd"}}"#;
        let detail = refusal_detail(401, body);
        assert_eq!(detail, "HTTP 401 invalid_request_error/api_key_expired");
        assert_eq!(refusal_detail(400, b"not json"), "HTTP 400 -/-");
    }
}
