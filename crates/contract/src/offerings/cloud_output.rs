//! The schema of a zone mapping's `offerings`, which the server reads as it comes (without
//! holding it as a tree): the shapes the clouds' CLIs print, as the document states them. Each
//! type here is schema-only.

use utoipa::openapi::schema::{
    AnyOfBuilder, ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::mappings::{array_of, output_text, MAX_OUTPUTS};

/// Most SKUs in an Azure offerings array, as the document states it.
pub(crate) const MAX_SKUS: usize = 100_000;
/// Most machine types in a GCP offerings array, as the document states it.
pub(crate) const MAX_MACHINE_TYPES: usize = 1_000_000;

/// Schema-only type: the offerings outputs a zone mapping may carry (AWS, Azure or GCP).
#[derive(Debug)]
pub struct OfferingsOutput;

/// Schema-only type: one region's `aws ec2 describe-instance-type-offerings` output.
#[derive(Debug)]
pub struct AwsOfferingsOutput;

/// Schema-only type: one SKU of `az vm list-skus --output json`.
#[derive(Debug)]
pub struct AzureSku;

/// Schema-only type: one machine type of `gcloud compute machine-types list --format=json`.
#[derive(Debug)]
pub struct GcpMachineType;

/// An array of the cloud's strings (zones, locations).
fn texts(max: usize) -> ArrayBuilder {
    ArrayBuilder::new()
        .items(output_text())
        .max_items(Some(max))
}

impl PartialSchema for AwsOfferingsOutput {
    fn schema() -> RefOr<Schema> {
        let offering = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("InstanceType", output_text())
            .property(
                "LocationType",
                output_text().description(Some(
                    "`availability-zone-id` or `availability-zone`; `region` and `outpost` \
                     outputs place no zone and are named in `skipped`.",
                )),
            )
            .property("Location", output_text())
            .required("InstanceType")
            .required("LocationType")
            .required("Location");
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property(
                "InstanceTypeOfferings",
                ArrayBuilder::new()
                    .items(offering)
                    .max_items(Some(1_000_000)),
            )
            .property(
                "NextToken",
                output_text().description(Some(
                    "Present only in a truncated output (`--max-items`): refused, since the \
                     zones it leaves out would look like zones without the type.",
                )),
            )
            .required("InstanceTypeOfferings")
            .description(Some(
                "One AWS region's `aws ec2 describe-instance-type-offerings --location-type \
                 availability-zone-id --output json` (or `--location-type availability-zone`) \
                 output.",
            ))
            .into()
    }
}

impl ToSchema for AwsOfferingsOutput {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("AwsOfferingsOutput")
    }
}

impl PartialSchema for AzureSku {
    fn schema() -> RefOr<Schema> {
        let location = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("location", output_text())
            .property(
                "zones",
                texts(100).description(Some("The subscription's logical zones offering the SKU.")),
            )
            .required("location");
        let restriction_info = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("locations", texts(1000))
            .property("zones", texts(100));
        let restriction = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property(
                "type",
                output_text().description(Some("`Zone` or `Location`.")),
            )
            .property("reasonCode", output_text())
            .property("restrictionInfo", restriction_info)
            .property("values", texts(1000))
            .required("type");
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("name", output_text())
            .property("resourceType", output_text())
            .property(
                "locationInfo",
                ArrayBuilder::new().items(location).max_items(Some(1000)),
            )
            .property(
                "restrictions",
                ArrayBuilder::new().items(restriction).max_items(Some(1000)),
            )
            .required("name")
            .required("locationInfo")
            .description(Some(
                "One SKU of `az vm list-skus --resource-type virtualMachines --location L \
                 --output json`. A `Zone` restriction with reason `NotAvailableForSubscription` \
                 removes its zones, a `Location` restriction the whole location.",
            ))
            .into()
    }
}

impl ToSchema for AzureSku {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("AzureSku")
    }
}

impl PartialSchema for GcpMachineType {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("name", output_text())
            .property(
                "zone",
                output_text().description(Some("The zone's bare name (`us-central1-a`).")),
            )
            .required("name")
            .required("zone")
            .description(Some(
                "One machine type of `gcloud compute machine-types list --format=json`.",
            ))
            .into()
    }
}

impl ToSchema for GcpMachineType {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("GcpMachineType")
    }
}

impl PartialSchema for OfferingsOutput {
    fn schema() -> RefOr<Schema> {
        // An empty array is what `az vm list-skus` and `gcloud` print when nothing matches,
        // and what an AWS caller with no outputs sends: stored as no offerings. GCP's stays
        // non-empty: a GCP mapping holds offerings alone, so an empty one is refused.
        AnyOfBuilder::new()
            .item(Ref::from_schema_name("AwsOfferingsOutput"))
            .item(
                array_of(
                    "AwsOfferingsOutput",
                    MAX_OUTPUTS,
                    "`aws`: several regions' outputs, an array of them.",
                )
                .min_items(None),
            )
            .item(
                array_of(
                    "AzureSku",
                    MAX_SKUS,
                    "`azure`: one location's `az vm list-skus` output, an array of SKUs; \
                     several locations' outputs joined into one array (each SKU names its \
                     location). The server also reads an array of those arrays, as they come.",
                )
                .min_items(None),
            )
            .item(array_of(
                "GcpMachineType",
                MAX_MACHINE_TYPES,
                "`gcp`: `gcloud compute machine-types list --format=json`, an array of machine \
                 types.",
            ))
            .description(Some(
                "Which instance types the account may launch where, as the cloud CLI printed \
                 it: `aws ec2 describe-instance-type-offerings --location-type \
                 availability-zone-id --output json` (or `--location-type availability-zone`, \
                 whose names are read through this mapping's zones), one output or an array of \
                 them; `az vm list-skus --resource-type virtualMachines --location L --output \
                 json` (logical zones read through this mapping's Azure zones), one or an array \
                 of them; `gcloud compute machine-types list --format=json`. Keys the server \
                 does not read are allowed and ignored.",
            ))
            .into()
    }
}

impl ToSchema for OfferingsOutput {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("OfferingsOutput")
    }
}
