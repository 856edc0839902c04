//! Crash durability, concurrency, hostile input and sustained load.
