//! The parser's memory beyond the module it builds: tokens are made on demand, so parsing a
//! text holds little more than the text and the module (a token vector took ~48 bytes a
//! token, about 20 times the input). Heap figures from `dhat` in testing mode.

use irpass_ir::Module;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

#[test]
fn parsing_holds_little_beyond_the_text_and_the_module() {
    let n = 50_000;
    let mut text = String::from("def @main(%x: Tensor[(2), float32]) {\n  %0 = add(%x, %x);\n");
    for i in 1..n {
        text.push_str(&format!("  %{i} = add(%{}, %x);\n", i - 1));
    }
    text.push_str(&format!("  %{}\n}}\n", n - 1));
    // The only test of this binary: the profiler sees the parse alone.
    let _profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get();
    let module = Module::parse(&text).unwrap();
    let after = dhat::HeapStats::get();
    let kept = after.curr_bytes - before.curr_bytes;
    let transient = after.max_bytes - before.curr_bytes - kept;
    drop(module);
    // What the parse needed beyond what it returned (the module keeps a copy of the text for
    // messages): a few bytes per byte of text (the scopes' name maps), where a token vector
    // took ~20 times the text.
    assert!(
        transient <= 3 * text.len(),
        "transient {transient} bytes for a text of {} bytes (module: {kept} bytes)",
        text.len()
    );
}
