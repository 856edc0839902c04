//! The API key never shows in `Debug` or `Display` of the client, the builder or any error.

use std::time::Duration;

use appzone_client::{Client, Error, RetryPolicy};
use appzone_contract::headers::API_KEY;

use crate::support::{closed_port, key, Reply, Server};

/// Every text an error can show: `Display`, `Debug` and its whole source chain.
fn texts(error: &Error) -> Vec<String> {
    let mut texts = vec![
        error.to_string(),
        format!("{error:?}"),
        format!("{error:#?}"),
    ];
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        texts.push(s.to_string());
        texts.push(format!("{s:?}"));
        source = s.source();
    }
    texts
}

fn assert_hidden(what: &str, texts: &[String], secret: &str) {
    for text in texts {
        assert!(!text.contains(secret), "{what} shows the key: {text}");
    }
}

#[tokio::test]
async fn the_key_never_appears_in_client_builder_or_error_texts() {
    let key = key();
    let secret = key.expose_secret();
    let plain = "opaque-token-of-another-implementation-0123456789";

    let builder = Client::builder("http://127.0.0.1:1", &key);
    assert_hidden("builder", &[format!("{builder:?}")], secret);
    let client = builder.build().unwrap();
    assert_hidden(
        "client",
        &[
            format!("{client:?}"),
            format!("{client:#?}"),
            client.to_string(),
        ],
        secret,
    );
    let plain_client = Client::new("http://127.0.0.1:1", plain).unwrap();
    assert_hidden(
        "client",
        &[format!("{plain_client:?}"), plain_client.to_string()],
        plain,
    );
    assert!(format!("{client:?}").contains("<redacted>"));

    // API errors (the server even echoes the key in its message and headers).
    let server = Server::start(vec![
        Reply::error(401, "invalid_api_key", "bad key").header("x-echo", secret),
        Reply::text(500, "text/plain", "oops"),
        Reply::text(200, "text/plain", "not json"),
        Reply::zones(&["z"]).delay(Duration::from_secs(5)),
    ])
    .await;
    let client = Client::builder(server.url(), &key)
        .retry_policy(RetryPolicy::none())
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let mut errors = Vec::new();
    for _ in 0..4 {
        errors.push(client.list_zones("aws", "us-east-1").await.unwrap_err());
    }
    assert!(errors[0].is_unauthorized());
    assert!(matches!(errors[2], Error::Decode(_)));
    assert!(errors[3].is_timeout());
    // The key did go out, in X-API-KEY.
    assert_eq!(server.seen()[0].header(API_KEY.as_str()), Some(secret));

    // Connect failures, local rejections.
    let refused = Client::new(format!("http://{}", closed_port().await), &key).unwrap();
    errors.push(refused.delete_profile("prof_1").await.unwrap_err());
    errors.push(refused.delete_profile("bad id").await.unwrap_err());
    errors.push(refused.list_zones("Bad", "r").await.unwrap_err());
    errors.push(Client::new(format!("http://u:{secret}@127.0.0.1"), &key).unwrap_err());
    let with_newline = format!("{secret}\n");
    errors.push(Client::new("http://127.0.0.1:1", with_newline.as_str()).unwrap_err());
    for error in &errors {
        assert_hidden("error", &texts(error), secret);
    }
}
