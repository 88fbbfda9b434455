//! The Python code runtime: a fresh `python3 -I` subprocess per run speaking JSON lines on fd 3.
//! (Being built: see issue #7.)
