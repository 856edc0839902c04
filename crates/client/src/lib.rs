//! appzone client (in progress).
