//! OWASP API Security Top 10 checks that apply to this API, one named test each.
