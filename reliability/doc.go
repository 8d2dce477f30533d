// Package reliability holds zrviz's hardening tests: a seeded corpus of
// structurally corrupted F2FS images driven through imgio, sim and core;
// compressed-input bombs; load, fault and security tests against a live
// web server; and the read-only guarantee for the user's image file.
//
// The helpers the tests share live in *_helpers_test.go files: a copy-on-write overlay
// [io.ReaderAt] that patches a few bytes over a shared original, the F2FS
// CRC, the corruption generator and the per-image checker. They never
// write to an image they were given.
//
// See docs/reliability.md for what is tested, how to run it and the
// figures measured.
package reliability
