//! `appzone-server org`, `key` and `profile`: an organization and what it owns, created,
//! listed as tables and revoked or restored.

use std::io::Write;

use anyhow::bail;
use appzone_contract::{ApiKey, KeyId, ProfileId};
use clap::Subcommand;
use tabwriter::TabWriter;

use crate::model::{format_ms, OrgId, Role};
use crate::storage::Store;

/// `org` subcommands.
#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create an organization; prints its id.
    Create {
        /// Organization id: letters, digits, '.', '_', '-'.
        #[arg(value_parser = parse_org)]
        org_id: OrgId,
        /// Display name (defaults to the id).
        #[arg(long, value_parser = parse_name)]
        name: Option<String>,
    },
    /// List the organizations as a table, with their active keys and live profiles counted.
    List,
}

/// `key` subcommands.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create a key; prints the key, alone on one line. It is shown only this once.
    Create {
        /// Organization the key belongs to.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
        /// What the key may do.
        #[arg(long, value_parser = ["admin", "member"])]
        role: String,
        /// A name to recognize the key by.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// List an organization's keys as a table (never the keys themselves). LAST_USED is when
    /// the key last authenticated a request, to within a minute (`-`: never).
    List {
        /// Organization whose keys to list.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
    },
    /// Revoke a key; every replica refuses it within a second (within the key cache TTL, on a
    /// replica that has lost its change notifications). Confirms on stderr;
    /// a key already revoked is left as it was and is not an error, so re-running is safe.
    Revoke {
        /// The 12-character KEY_ID shown by `key list` (the part after `apz_`), or the whole
        /// key. Never echoed, in case it is a secret.
        key: String,
    },
}

/// `profile` subcommands.
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Create a profile; prints its id.
    Create {
        /// Organization the profile belongs to.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
        /// Profile name: 1 to 200 printable characters, not only spaces.
        #[arg(long, value_parser = parse_name)]
        name: String,
        /// Profile id (default: `prof_` + a new ULID).
        #[arg(long)]
        id: Option<ProfileId>,
    },
    /// List an organization's profiles as a table.
    List {
        /// Organization whose profiles to list.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
        /// List deleted profiles (restorable tombstones) instead of live ones.
        #[arg(long)]
        deleted: bool,
    },
    /// Restore a deleted profile.
    Restore {
        /// The profile id.
        id: ProfileId,
    },
}

pub(super) async fn org_command(store: &Store, command: OrgCommand) -> anyhow::Result<String> {
    Ok(match command {
        OrgCommand::Create { org_id, name } => {
            let name = name.unwrap_or_else(|| org_id.as_str().to_owned());
            store.create_org(&org_id, &name).await?;
            format!("{org_id}\n")
        }
        OrgCommand::List => {
            let rows = store.list_orgs().await?;
            table(
                &["ORG_ID", "NAME", "CREATED", "KEYS", "PROFILES"],
                rows.into_iter().map(|o| {
                    vec![
                        o.id,
                        o.name,
                        format_ms(o.created_at),
                        o.active_keys.to_string(),
                        o.live_profiles.to_string(),
                    ]
                }),
            )
        }
    })
}

/// The key id of a `key revoke` argument: a key id, or a whole key (whose id is revoked).
/// The argument is never repeated in an error: it may be a secret.
pub(super) fn key_id_of(arg: &str) -> anyhow::Result<KeyId> {
    if let Ok(key_id) = arg.parse::<KeyId>() {
        return Ok(key_id);
    }
    if let Ok(key) = arg.parse::<ApiKey>() {
        return Ok(key.key_id().clone());
    }
    bail!(
        "the argument of `key revoke` is neither a key id nor a key: give the 12-character \
         KEY_ID that `key list` shows (the argument is not repeated here, as it may be secret)"
    )
}

pub(super) async fn key_command(store: &Store, command: KeyCommand) -> anyhow::Result<String> {
    Ok(match command {
        KeyCommand::Create { org, role, name } => {
            let role: Role = role.parse().map_err(anyhow::Error::msg)?;
            let key = store.create_key(&org, role, &name).await?;
            format!("{}\n", key.expose_secret())
        }
        KeyCommand::List { org } => {
            let rows = store.list_keys(&org).await?;
            table(
                &["KEY_ID", "ROLE", "NAME", "CREATED", "REVOKED", "LAST_USED"],
                rows.into_iter().map(|k| {
                    vec![
                        k.key_id,
                        k.role.to_string(),
                        k.name,
                        format_ms(k.created_at),
                        k.revoked_at
                            .map(format_ms)
                            .unwrap_or_else(|| "-".to_owned()),
                        k.last_used_at
                            .map(format_ms)
                            .unwrap_or_else(|| "-".to_owned()),
                    ]
                }),
            )
        }
        KeyCommand::Revoke { key } => {
            let key_id = key_id_of(&key)?;
            let revocation = store.revoke_key(key_id.as_str()).await?;
            // On stderr: stdout stays empty, as for every command that only changes state.
            if revocation.already {
                eprintln!("key {key_id} was already revoked");
            } else {
                eprintln!("revoked key {key_id} (organization {})", revocation.org_id);
            }
            String::new()
        }
    })
}

pub(super) async fn profile_command(
    store: &Store,
    command: ProfileCommand,
) -> anyhow::Result<String> {
    Ok(match command {
        ProfileCommand::Create { org, name, id } => {
            let id = store.create_profile(&org, &name, id).await?;
            format!("{id}\n")
        }
        ProfileCommand::List { org, deleted } => {
            let rows = store.list_profiles(&org, deleted).await?;
            table(
                &["ID", "NAME", "CREATED", "DELETED"],
                rows.into_iter().map(|p| {
                    vec![
                        p.id,
                        p.name,
                        format_ms(p.created_at),
                        p.deleted_at
                            .map(format_ms)
                            .unwrap_or_else(|| "-".to_owned()),
                    ]
                }),
            )
        }
        ProfileCommand::Restore { id } => {
            store.restore_profile(&id).await?;
            String::new()
        }
    })
}

fn parse_org(id: &str) -> Result<OrgId, String> {
    id.parse()
}

/// A display name: not blank, at most 200 printable characters.
fn parse_name(name: &str) -> Result<String, String> {
    crate::model::check_display_name(name).map(|()| name.to_owned())
}

/// Left-aligned columns at least two spaces apart, header first.
fn table(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut out = TabWriter::new(Vec::new()).minwidth(0);
    for line in std::iter::once(header.join("\t")).chain(rows.map(|row| row.join("\t"))) {
        // Into a Vec: writing cannot fail.
        let _ = writeln!(out, "{line}");
    }
    out.into_inner()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}
