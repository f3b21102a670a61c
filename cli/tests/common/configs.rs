//! Small configurations the test files share: the workspace's one set
//! (`tests/fixtures/configs.rs`).

include!("../../../tests/fixtures/configs.rs");
