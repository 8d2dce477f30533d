package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/web"
)

// TestServeMaxMemory: --max-memory is the server's memory budget: a run answer that needs more than
// all of it is refused with 413, saying by how much (issue 37: no wait makes it fit); 0 means no
// bound; the default is a quarter of the
// machine's memory within [256 MiB, web.DefaultMaxMemory].
func TestServeMaxMemory(t *testing.T) {
	if d := defaultMaxMemory(); d < 256<<20 || d > web.DefaultMaxMemory {
		t.Errorf("default --max-memory %d, want 256 MiB to %d", d, web.DefaultMaxMemory)
	}
	for _, tc := range []struct {
		limit string
		code  int
	}{{"1MiB", http.StatusRequestEntityTooLarge}, {"0", http.StatusOK}} {
		t.Run(tc.limit, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--quiet", "--max-memory", tc.limit}, pw, io.Discard)
				pw.Close()
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v", err)
				}
			}()
			line, err := bufio.NewReader(pr).ReadString('\n')
			if err != nil {
				t.Fatalf("serve printed nothing: %v", err)
			}
			go io.Copy(io.Discard, pr)
			url := strings.Fields(line[strings.Index(line, "http://"):])[0]
			// The run API reserves about 1 MiB + 48 bytes a slot per mode (16,384 slots, both modes).
			res, err := http.Get(url + "api/images/demo/run?path=/seed/bench64.bin")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.code {
				t.Fatalf("--max-memory %s: run API %d %.200s, want %d", tc.limit, res.StatusCode, body, tc.code)
			}
			if tc.code == http.StatusRequestEntityTooLarge && (res.Header.Get("Retry-After") != "" || !strings.Contains(string(body), "more than its whole 1 MiB budget")) {
				t.Errorf("413 with Retry-After or without a word about the budget: %v %s", res.Header, body)
			}
		})
	}
}

func TestServeHints(t *testing.T) {
	for addr, want := range map[string]string{"127.0.0.1:8080": "127.0.0.1:8081", ":9000": ":9001", "[::1]:7000": "[::1]:7001", "nonsense": "127.0.0.1:8081"} {
		if got := nextPort(addr); got != want {
			t.Errorf("nextPort(%q) = %q, want %q", addr, got, want)
		}
	}
	for _, tt := range []struct{ url, addr, want string }{
		{"http://127.0.0.1:8080", "127.0.0.1:8080", "http://127.0.0.1:8080/"},
		{"http://[::]:8080", "0.0.0.0:8080", "http://127.0.0.1:8080/ (and on every address of this machine, port 8080)"},
		{"http://[::]:9000", ":9000", "http://127.0.0.1:9000/ (and on every address of this machine, port 9000)"},
		{"http://192.0.2.1:80", "192.0.2.1:80", "http://192.0.2.1:80/"},
	} {
		if got := servingAt(tt.url, tt.addr); got != tt.want {
			t.Errorf("servingAt(%q, %q) = %q, want %q", tt.url, tt.addr, got, tt.want)
		}
	}
}
