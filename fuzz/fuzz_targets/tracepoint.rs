#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numasleuth_fuzzing::tracepoint::run(data));
