//! A small test IR and helpers shared by the integration tests.
