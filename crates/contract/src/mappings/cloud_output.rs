//! The schema of a zone mapping's `output`, which the server reads as it comes
//! (`serde_json::Value`): the shapes the clouds' CLIs print, as the document states them. Each
//! type here is schema-only.

use utoipa::ToSchema;

/// Most outputs in one array (several regions' `describe-availability-zones`, the locations of
/// `list-locations`, several regions' offerings), as the document states it.
pub(crate) const MAX_OUTPUTS: usize = 1000;

/// Schema-only type: a cloud CLI's JSON output, an object (one AWS region's
/// `describe-availability-zones`) or an array (several AWS regions' outputs, or Azure's
/// `list-locations`).
#[derive(Debug)]
pub struct CloudOutput;

/// Schema-only type: one AWS region's `aws ec2 describe-availability-zones` output. A component
/// of its own, so a generator that names inline schemas by their place makes one model of it,
/// not one per place that uses it.
#[derive(Debug)]
pub struct AwsDescribeOutput;

/// Schema-only type: one location of `az account list-locations -o json`.
#[derive(Debug)]
pub struct AzureLocation;

/// A string of a cloud's output: the clouds print ASCII names and ids; the server reads a value
/// as it is, never parses it. The offerings' schemas use it too.
pub(crate) fn output_text() -> utoipa::openapi::schema::ObjectBuilder {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .max_length(Some(512))
        .pattern(Some("^[ -~]*$"))
}

impl utoipa::PartialSchema for AwsDescribeOutput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
        // One zone as the CLI prints it: the keys read, others kept.
        let zone = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("RegionName", output_text())
            .property("ZoneName", output_text())
            .property("ZoneId", output_text())
            .property("ZoneType", output_text())
            .property("State", output_text())
            .property("OptInStatus", output_text())
            .property("ParentZoneId", output_text())
            .required("RegionName")
            .required("ZoneName")
            .required("ZoneId");
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property(
                "AvailabilityZones",
                ArrayBuilder::new()
                    .items(zone)
                    .min_items(Some(1))
                    .max_items(Some(1000)),
            )
            .required("AvailabilityZones")
            .description(Some(
                "One AWS region's `aws ec2 describe-availability-zones --all-availability-zones \
                 --output json` output: an object with a non-empty `AvailabilityZones`.",
            ))
            .into()
    }
}

impl ToSchema for AwsDescribeOutput {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("AwsDescribeOutput")
    }
}

impl utoipa::PartialSchema for AzureLocation {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
        let mapping = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("logicalZone", output_text())
            .property("physicalZone", output_text())
            .required("logicalZone")
            .required("physicalZone");
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Object))
            .property("name", output_text())
            .property("id", output_text())
            .property("type", output_text())
            .property(
                "availabilityZoneMappings",
                ArrayBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
                    .items(mapping)
                    .max_items(Some(100))
                    .description(Some(
                        "The location's zones (`null` or absent for a location without them).",
                    )),
            )
            .required("name")
            .description(Some("One location of `az account list-locations -o json`."))
            .into()
    }
}

impl ToSchema for AzureLocation {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("AzureLocation")
    }
}

impl utoipa::PartialSchema for CloudOutput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::AnyOfBuilder;
        use utoipa::openapi::Ref;
        AnyOfBuilder::new()
            .item(Ref::from_schema_name("AwsDescribeOutput"))
            .item(array_of(
                "AwsDescribeOutput",
                MAX_OUTPUTS,
                "`aws`: several regions' outputs, an array of them.",
            ))
            .item(array_of(
                "AzureLocation",
                MAX_OUTPUTS,
                "`azure`: `az account list-locations -o json`, an array of locations.",
            ))
            .description(Some(
                "The cloud CLI's JSON output, unchanged: `aws ec2 describe-availability-zones \
                 --all-availability-zones --output json` (an object, or an array of them), or \
                 `az account list-locations -o json` (an array). Keys the server does not read \
                 are allowed and ignored.",
            ))
            .into()
    }
}

/// A non-empty array of at most `max` of the schema `items`: how a CLI prints several outputs
/// or records.
pub(crate) fn array_of(
    items: &str,
    max: usize,
    description: &str,
) -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(utoipa::openapi::Ref::from_schema_name(items))
        .min_items(Some(1))
        .max_items(Some(max))
        .description(Some(description))
}

impl ToSchema for CloudOutput {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("CloudOutput")
    }
}
