//! AWS Signature Version 4 for Bedrock requests, by the `aws-sigv4` crate (AWS's own Rust
//! signer) rather than by hand: the service name `bedrock`, the payload hash sent as
//! `x-amz-content-sha256` and the session token as `x-amz-security-token`, both signed, as
//! the JavaScript SDK's signer does for pi 1.6. Tests check the `Authorization` header against
//! the one 1.6's SDK sent for the same request, key and time.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    sign, PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings,
};
use aws_sigv4::sign::v4;

use super::bedrock_auth::AwsCredentials;
use super::ProviderError;

/// The signing name of Bedrock's runtime.
const SERVICE: &str = "bedrock";

/// The headers signing adds (`authorization`, `x-amz-date`, `x-amz-content-sha256`,
/// `x-amz-security-token`), for a POST of `body` to `url` with `headers` (which it signs,
/// with the URL's host).
pub fn sign_request(
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
    creds: &AwsCredentials,
    region: &str,
    time: SystemTime,
) -> Result<Vec<(String, String)>, ProviderError> {
    let failed =
        |e: &dyn std::fmt::Display| ProviderError::Other(format!("cannot sign the request: {e}"));
    let identity = Credentials::new(
        &creds.access_key_id,
        &creds.secret_access_key,
        creds.session_token.clone(),
        None,
        "pi",
    )
    .into();
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SERVICE)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| failed(&e))?
        .into();
    let signable = SignableRequest::new(
        "POST",
        url,
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(body),
    )
    .map_err(|e| failed(&e))?;
    let (instructions, _signature) = sign(signable, &params)
        .map_err(|e| failed(&e))?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}
