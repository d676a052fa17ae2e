//! Optional inputs a node leaves out: a call of the IR holds only the inputs given and says
//! the positions of the others (its `absent` attribute); the kernels that read inputs by ONNX
//! position (the native operators', the loops') put them back.

/// A call's arguments `given` put back in their input positions around the `absent` ones
/// (`None` there).
pub(crate) fn positions<'a, T>(given: &[&'a T], absent: &[i64]) -> Vec<Option<&'a T>> {
    let mut slots = Vec::with_capacity(given.len() + absent.len());
    for &t in given {
        while absent.contains(&(slots.len() as i64)) {
            slots.push(None);
        }
        slots.push(Some(t));
    }
    slots
}
