//! Cloud CLI output of made-up accounts, as a zone mapping is built from: the client's and the
//! `appzone` command's tests send them.

/// The AWS fixture: `aws ec2 describe-availability-zones` output of one (made-up) account.
pub const DESCRIBE_US_EAST_1: &str = include_str!("../fixtures/describe-us-east-1.json");

/// The Azure fixture: `az account list-locations -o json` of one (made-up) subscription.
pub const LIST_LOCATIONS: &str = include_str!("../fixtures/list-locations-sample.json");
