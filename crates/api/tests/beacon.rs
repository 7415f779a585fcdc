//! The drand beacon: quicknet's constants against its recorded chain info, real recorded rounds
//! verified (and tampered ones refused), the relay client against testkit's stub relays (honest,
//! lying, down, stalled, not there yet), and the local beacon, refused by a deployed client.

use api::config::{ConfigError, beacon_source};
use aws_lc_rs::digest;
use clients::beacon::{BeaconClient, BeaconSource};
use domain::beacon::{self, Beacon, BeaconError, quicknet};
use testkit::drand::{self as stub, DrandStub, Mode};

fn recorded(round: u64) -> Beacon {
    let recorded = stub::round(round);
    Beacon {
        chain: quicknet::CHAIN_HASH.to_owned(),
        round,
        randomness: hex::decode(recorded.randomness)
            .unwrap()
            .try_into()
            .unwrap(),
        signature: hex::decode(recorded.signature).unwrap(),
    }
}

fn relays(stubs: &[&DrandStub]) -> BeaconClient {
    BeaconClient::new(BeaconSource::Relays(
        stubs.iter().map(|stub| stub.url()).collect(),
    ))
}

fn path(round: u64) -> String {
    format!("/{}/public/{round}", stub::CHAIN_HASH)
}

/// drand's chain hash is SHA-256(period as u32 BE || genesis_time as i64 BE || public key ||
/// groupHash || beaconID): recomputing it from the recorded chain info proves that the public
/// key there is quicknet's, and the constants must be that info's.
#[test]
fn quicknet_constants_are_the_chain_infos() {
    let info: serde_json::Value = serde_json::from_str(stub::CHAIN_INFO).unwrap();
    let field = |name: &str| info[name].as_str().unwrap().to_owned();
    let period = info["period"].as_i64().unwrap();
    let genesis = info["genesis_time"].as_i64().unwrap();
    let public_key = hex::decode(field("public_key")).unwrap();
    let mut context = digest::Context::new(&digest::SHA256);
    context.update(&u32::try_from(period).unwrap().to_be_bytes());
    context.update(&genesis.to_be_bytes());
    context.update(&public_key);
    context.update(&hex::decode(field("groupHash")).unwrap());
    context.update(info["metadata"]["beaconID"].as_str().unwrap().as_bytes());
    assert_eq!(hex::encode(context.finish()), field("hash"));

    assert_eq!(field("hash"), quicknet::CHAIN_HASH);
    assert_eq!(field("schemeID"), "bls-unchained-g1-rfc9380");
    assert_eq!(public_key, quicknet::PUBLIC_KEY);
    assert_eq!(genesis, quicknet::GENESIS);
    assert_eq!(period, quicknet::PERIOD);
}

#[test]
fn every_recorded_round_verifies() {
    for round in stub::ROUNDS {
        assert_eq!(beacon::verify(&recorded(round.round)), Ok(()), "{round:?}");
    }
}

#[test]
fn a_tampered_beacon_is_refused() {
    let genuine = recorded(1000);
    let other = recorded(123);
    let mut tampered = Vec::new();
    // The randomness not the signature's SHA-256.
    let mut b = genuine.clone();
    b.randomness[31] ^= 1;
    tampered.push(("randomness", b));
    // Another round's signature and its randomness: consistent, caught only by BLS.
    let mut b = genuine.clone();
    b.signature = other.signature.clone();
    b.randomness = other.randomness;
    tampered.push(("another round's signature", b));
    // The genuine beacon claimed for another round.
    let mut b = genuine.clone();
    b.round = 1001;
    tampered.push(("round", b));
    // A signature that is not a point of G1 (its randomness made consistent).
    let mut b = genuine.clone();
    b.signature[47] ^= 1;
    b.randomness = digest::digest(&digest::SHA256, &b.signature)
        .as_ref()
        .try_into()
        .unwrap();
    tampered.push(("signature bit", b));
    let mut b = genuine.clone();
    b.signature.truncate(40);
    tampered.push(("short signature", b));
    let mut b = genuine.clone();
    b.chain = "8990e7a9aaed2ffed73dbd7092123d6f289930540d7651336225dc172e51b2ce".into();
    tampered.push(("another chain", b));
    tampered.push(("a local beacon", beacon::local(1000)));
    for (what, beacon) in tampered {
        assert_eq!(beacon::verify(&beacon), Err(BeaconError::Invalid), "{what}");
    }
}

#[test]
fn a_beacon_is_json_with_hex() {
    let json = serde_json::to_value(recorded(1000)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "chain": stub::CHAIN_HASH,
            "round": 1000,
            "randomness": stub::round(1000).randomness,
            "signature": stub::round(1000).signature,
        })
    );
    assert_eq!(
        serde_json::from_value::<Beacon>(json).unwrap(),
        recorded(1000)
    );
}

#[tokio::test]
async fn a_real_round_is_fetched_and_verified() {
    let relay = DrandStub::start().await;
    let client = relays(&[&relay]);
    for round in [1, 1000, 9_367_912] {
        assert_eq!(client.fetch(round).await, Ok(recorded(round)));
    }
    assert_eq!(relay.received(), [path(1), path(1000), path(9_367_912)]);
}

#[tokio::test]
async fn a_lying_or_broken_relay_is_skipped_for_an_honest_one() {
    let (logs, _guard) = testkit::logs::capture();
    let honest = DrandStub::start().await;
    for mode in [
        Mode::TamperedRandomness,
        Mode::ForgedSignature,
        Mode::Garbage,
        Mode::Down,
    ] {
        let liar = DrandStub::start_with(mode).await;
        let client = relays(&[&liar, &honest]);
        assert_eq!(client.fetch(1000).await, Ok(recorded(1000)), "{mode:?}");
        assert_eq!(liar.received(), [path(1000)], "{mode:?}");
    }
    // Skipped relays are logged by reason, never with what they served.
    let text = logs.text();
    assert!(text.contains("skipped a drand relay"), "{text}");
    assert!(text.contains("fails verification"), "{text}");
    logs.assert_free_of(&[
        stub::round(1000).signature,
        stub::round(1).signature,
        &stub::round(1000).randomness[1..],
    ]);
}

#[tokio::test]
async fn a_stalled_relay_is_given_up_for_the_next() {
    let stalled = DrandStub::start_with(Mode::Stalled).await;
    let honest = DrandStub::start().await;
    let client = relays(&[&stalled, &honest]);
    assert_eq!(client.fetch(1000).await, Ok(recorded(1000)));
    assert_eq!(honest.received(), [path(1000)]);
}

#[tokio::test]
async fn no_valid_beacon_anywhere_is_unavailable() {
    let down = DrandStub::start_with(Mode::Down).await;
    let liar = DrandStub::start_with(Mode::ForgedSignature).await;
    let closed = format!("http://127.0.0.1:{}", testkit::free_port());
    let client = BeaconClient::new(BeaconSource::Relays(vec![down.url(), liar.url(), closed]));
    assert_eq!(client.fetch(1000).await, Err(BeaconError::Unavailable));
    assert_eq!(down.received(), [path(1000)]);
    assert_eq!(liar.received(), [path(1000)]);
}

#[tokio::test]
async fn a_round_not_there_yet_is_not_yet() {
    let first = DrandStub::start().await;
    let second = DrandStub::start().await;
    let client = relays(&[&first, &second]);
    // Its time has not come: no relay is asked.
    let now = i64::try_from(domain::timestamp::Timestamp::now().unix_seconds()).unwrap();
    let future = quicknet::round_at(now) + 20;
    assert_eq!(client.fetch(future).await, Err(BeaconError::NotYet));
    assert_eq!(client.fetch(0).await, Err(BeaconError::NotYet));
    assert!(first.received().is_empty());
    // Every relay answers 404 (they lag behind the clock): not yet.
    first.set_latest(1000);
    second.set_latest(1000);
    assert_eq!(client.fetch(9_367_912).await, Err(BeaconError::NotYet));
    assert_eq!(second.received(), [path(9_367_912)]);
    // One without it and one down: unavailable, not "not yet".
    second.set_mode(Mode::Down);
    assert_eq!(client.fetch(9_367_912).await, Err(BeaconError::Unavailable));
}

#[tokio::test]
async fn only_a_local_client_takes_a_local_beacon() {
    // A deployed function's configuration: template.yaml never sets DRAND_LOCAL_BEACON.
    let template = include_str!("../../../template.yaml");
    assert!(!template.contains("DRAND_LOCAL_BEACON"));
    let deployed =
        BeaconClient::new(beacon_source(&[("DRAND_URLS", "https://api.drand.sh")]).unwrap());
    let local = BeaconClient::new(beacon_source(&[("DRAND_LOCAL_BEACON", "1")]).unwrap());

    let beacon = beacon::local(1000);
    assert_eq!(beacon.chain, "local");
    assert_eq!(deployed.verify(&beacon), Err(BeaconError::Invalid));
    assert_eq!(local.verify(&beacon), Ok(()));
    // Still a real quicknet beacon verifies on both, and a tampered local one on neither.
    assert_eq!(deployed.verify(&recorded(1000)), Ok(()));
    assert_eq!(local.verify(&recorded(1000)), Ok(()));
    let mut forged = beacon::local(1000);
    forged.randomness[0] ^= 1;
    assert_eq!(local.verify(&forged), Err(BeaconError::Invalid));
    let mut moved = beacon::local(1000);
    moved.round = 1001;
    assert_eq!(local.verify(&moved), Err(BeaconError::Invalid));

    // The local client makes its beacon without a network, once the round's time has come.
    assert_eq!(local.fetch(1000).await, Ok(beacon::local(1000)));
    let now = i64::try_from(domain::timestamp::Timestamp::now().unix_seconds()).unwrap();
    assert_eq!(
        local.fetch(quicknet::round_at(now) + 20).await,
        Err(BeaconError::NotYet)
    );
    // Its randomness is the SHA-256 of its (plain-text) signature, for scripts/verify-queue.
    assert_eq!(
        beacon.randomness.as_slice(),
        digest::digest(&digest::SHA256, &beacon.signature).as_ref()
    );
    assert_eq!(
        String::from_utf8(beacon.signature).unwrap(),
        "local beacon, not drand: round 1000"
    );
}

#[test]
fn the_relays_are_configured() {
    let defaults = [
        "https://api.drand.sh",
        "https://api2.drand.sh",
        "https://drand.cloudflare.com",
    ];
    assert_eq!(
        beacon_source(&[("UNRELATED", "1")]),
        Ok(BeaconSource::Relays(defaults.map(String::from).to_vec()))
    );
    assert_eq!(
        beacon_source(&[("DRAND_URLS", " https://a.example , http://127.0.0.1:9, ")]),
        Ok(BeaconSource::Relays(vec![
            "https://a.example".into(),
            "http://127.0.0.1:9".into()
        ]))
    );
    for (name, value) in [
        ("DRAND_URLS", "http://api.drand.sh"),
        ("DRAND_URLS", "ftp://api.drand.sh"),
        ("DRAND_URLS", " , "),
        ("DRAND_LOCAL_BEACON", "true"),
    ] {
        assert!(
            matches!(beacon_source(&[(name, value)]), Err(ConfigError::Invalid { name: n, .. }) if n == name),
            "{name}={value}"
        );
    }
}
