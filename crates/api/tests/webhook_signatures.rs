//! Issue 46's signatures (`domain::webhooks`), judged by the Standard Webhooks specification's
//! own Python library (PyPI's `standardwebhooks`, `testkit::standard_webhooks`): what the API
//! signs it accepts, under either secret of a rotation and under no other; what it signs the API
//! accepts (an identity provider's webhooks, issue 47), and a body changed after signing neither.

use domain::timestamp::unix_now;
use domain::webhooks::{Received, SigningSecret, VerifyError, signature_header, verify};
use testkit::standard_webhooks::{signature, verifies};

const BODY: &str = r#"{"id":"evt_1","type":"wallet.linked","data":{"userId":"fan-1"}}"#;

#[test]
fn the_library_accepts_what_the_api_signs_under_either_secret_of_a_rotation() {
    let (old, old_text) = SigningSecret::generate().unwrap();
    let (new, new_text) = SigningSecret::generate().unwrap();
    let (_, other_text) = SigningSecret::generate().unwrap();
    let now = unix_now();
    let one = signature_header(std::slice::from_ref(&new), "msg_one", now, BODY.as_bytes());
    assert_eq!(
        verifies(&new_text, "msg_one", now, &one, BODY.as_bytes()),
        Ok(())
    );
    assert!(verifies(&old_text, "msg_one", now, &one, BODY.as_bytes()).is_err());

    let both = signature_header(&[new, old], "msg_two", now, BODY.as_bytes());
    assert_eq!(both.split(' ').count(), 2, "{both}");
    for secret in [&new_text, &old_text] {
        assert_eq!(
            verifies(secret, "msg_two", now, &both, BODY.as_bytes()),
            Ok(())
        );
    }
    assert!(verifies(&other_text, "msg_two", now, &both, BODY.as_bytes()).is_err());
    let altered = BODY.replace("fan-1", "fan-2");
    assert!(verifies(&new_text, "msg_two", now, &both, altered.as_bytes()).is_err());
    assert!(verifies(&new_text, "msg_other", now, &both, BODY.as_bytes()).is_err());
}

#[test]
fn the_api_accepts_what_the_library_signs_and_nothing_altered() {
    let (secret, text) = SigningSecret::generate().unwrap();
    let now = unix_now();
    let signed = signature(&text, "msg_in", now, BODY);
    let timestamp = now.to_string();
    let received = |id, signature| Received {
        id,
        timestamp: &timestamp,
        signature,
    };
    let secrets = [secret];
    assert_eq!(
        verify(&secrets, received("msg_in", &signed), BODY.as_bytes(), now),
        Ok(())
    );
    assert_eq!(
        verify(&secrets, received("msg_in", &signed), b"{}", now),
        Err(VerifyError::NoMatch)
    );
    assert_eq!(
        verify(
            &secrets,
            received("msg_other", &signed),
            BODY.as_bytes(),
            now
        ),
        Err(VerifyError::NoMatch)
    );
}
