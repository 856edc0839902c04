//! `GET /docs`: Swagger UI over `/openapi.json`, from assets compiled into the binary (the
//! `utoipa-swagger-ui` crate's vendored distribution), so it works with no network at all.

use std::sync::{Arc, OnceLock};

use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use utoipa_swagger_ui::Config;

use super::error::ApiError;
use appzone_contract::ErrorCode;

fn config() -> Arc<Config<'static>> {
    static CONFIG: OnceLock<Arc<Config<'static>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| Arc::new(Config::from("/openapi.json")))
        .clone()
}

/// `GET /docs` and `GET /docs/`: the UI's page. A `<base>` element makes its relative asset
/// links resolve under `/docs/` whichever of the two URLs was used.
pub async fn index() -> Response {
    match utoipa_swagger_ui::serve("index.html", config()) {
        Ok(Some(file)) => {
            let html = String::from_utf8_lossy(&file.bytes).replacen(
                "<head>",
                "<head><base href=\"/docs/\">",
                1,
            );
            ([(CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
        }
        Ok(None) => ApiError::internal("swagger ui index.html is missing").into_response(),
        Err(err) => ApiError::internal(format!("swagger ui: {err}")).into_response(),
    }
}

/// `GET /docs/{file}`: the UI's scripts and styles. A name that is not UTF-8 after decoding
/// names no asset: 404 like any other unknown name.
pub async fn asset(file: Result<Path<String>, PathRejection>) -> Response {
    let Ok(Path(file)) = file else {
        return ApiError::new(ErrorCode::NotFound, "no such route").into_response();
    };
    match utoipa_swagger_ui::serve(&file, config()) {
        Ok(Some(file)) => {
            ([(CONTENT_TYPE, file.content_type)], file.bytes.into_owned()).into_response()
        }
        Ok(None) => ApiError::new(ErrorCode::NotFound, "no such route").into_response(),
        Err(err) => ApiError::internal(format!("swagger ui: {err}")).into_response(),
    }
}
