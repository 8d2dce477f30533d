package imgio

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// fpRegions lists, for an input of size bytes, one byte offset inside each region Fingerprint reads:
// the first 2 MiB, each of the 64 samples, the last 1 MiB.
func fpRegions(size int64) []int64 {
	offs := []int64{fpHead / 2}
	span := size - fpSample
	for i := range int64(fpSamples) {
		offs = append(offs, span*i/(fpSamples-1)+fpSample/2)
	}
	return append(offs, size-fpTail/2)
}

// TestFingerprint checks that the fingerprint is stable (the same bytes through two readers give the
// same one), that a change of one byte in any sampled region or of the size changes it, and that a
// change outside them does not: it is a fingerprint, not a hash of every byte.
func TestFingerprint(t *testing.T) {
	const size = 40 << 20
	b := make([]byte, size)
	rand.NewChaCha8([32]byte{31}).Read(b) // pseudo-random and seeded, filled 32 bytes a call
	base, err := Fingerprint(bytes.NewReader(b), size)
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 64 {
		t.Fatalf("fingerprint %q: want 64 hex digits", base)
	}
	name := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if again, err := Fingerprint(f, size); err != nil || again != base {
		t.Fatalf("through a file: %q, %v; want %q", again, err, base)
	}
	seen := map[string]int64{base: -1}
	for _, off := range fpRegions(size) {
		b[off] ^= 0x40
		fp, err := Fingerprint(bytes.NewReader(b), size)
		b[off] ^= 0x40
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[fp]; dup {
			t.Errorf("a byte changed at %d gives the fingerprint of the change at %d", off, prev)
		}
		seen[fp] = off
	}
	if fp, _ := Fingerprint(bytes.NewReader(b[:size-1]), size-1); fp == base {
		t.Error("one byte shorter: same fingerprint")
	}
	// Between the samples 1 and 2 (about 650 KiB apart here), a byte no region reads.
	gap := fpRegions(size)[1] + fpSample
	if gap < fpHead {
		gap = fpHead + 8
	}
	b[gap] ^= 1
	if fp, _ := Fingerprint(bytes.NewReader(b), size); fp != base {
		t.Errorf("a byte changed at %d, outside every sampled region, changed the fingerprint", gap)
	}
}

// TestFingerprintSmall checks inputs smaller than the regions: every byte is read, so any change
// shows.
func TestFingerprintSmall(t *testing.T) {
	for _, size := range []int64{0, 1, 4096, fpSample + 3, fpHead + 5} {
		b := bytes.Repeat([]byte{7}, int(size))
		base, err := Fingerprint(bytes.NewReader(b), size)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		for i := int64(0); i < size; i += max(1, size/50) {
			b[i] ^= 1
			if fp, _ := Fingerprint(bytes.NewReader(b), size); fp == base {
				t.Fatalf("%d bytes: a change at %d left the fingerprint alone", size, i)
			}
			b[i] ^= 1
		}
	}
	if _, err := Fingerprint(bytes.NewReader(make([]byte, 10)), 20); err == nil {
		t.Error("a reader shorter than the size: no error")
	}
}

// zeroAt reads as an endless run of zeros: an 8 GiB image that costs no memory.
type zeroAt struct{}

func (zeroAt) ReadAt(p []byte, off int64) (int, error) { clear(p); return len(p), nil }

// BenchmarkFingerprint8GiB measures the fingerprint of an 8 GiB input: 7 MiB read and hashed.
func BenchmarkFingerprint8GiB(b *testing.B) {
	for b.Loop() {
		if _, err := Fingerprint(zeroAt{}, 8<<30); err != nil {
			b.Fatal(err)
		}
	}
}
