//! The irpass pass library. Empty for now: the passes need the reference IR (`irpass::ir`),
//! which is the subject of its own issue. Nothing here pretends to be done.
