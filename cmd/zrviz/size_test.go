package main

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4096", 4096, true},
		{"0x1000", 4096, true},
		{"64MiB", 64 << 20, true},
		{"64mib", 64 << 20, true},
		{"1GiB", 1 << 30, true},
		{"8G", 8 << 30, true},
		{"512 KiB", 512 << 10, true},
		{"0", 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5GiB", 0, false},
		{"12XB", 0, false},
		{"99999999999TiB", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSize(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("parseSize(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if tt.ok && got != tt.want {
				t.Fatalf("parseSize(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestHumanSize(t *testing.T) {
	tests := map[int64]string{
		12:         "12 B",
		4096:       "4 KiB",
		4210788:    "4.0 MiB",
		67108864:   "64 MiB",
		9664729088: "9.0 GiB",
		1536:       "1.5 KiB",
	}
	for in, want := range tests {
		if got := humanSize(in); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", in, got, want)
		}
	}
	if got := groupDigits(16384); got != "16,384" {
		t.Errorf("groupDigits(16384) = %q", got)
	}
	if got := groupDigits(int64(-1234567)); got != "-1,234,567" {
		t.Errorf("groupDigits(-1234567) = %q", got)
	}
}
