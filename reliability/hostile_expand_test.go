package reliability

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHostileExpansionUploads: issue 13 item 4 over HTTP, against the built binary: the 44-byte
// Android sparse image (one non-zero FILL chunk declared at 64 GiB) and a 2 MB zstd bomb of zeros
// (510 frames of 128 MiB of zeros) are refused as not F2FS within 1 s of server CPU, with less than
// 1 MiB written by the server (wchar of /proc/PID/io: every write(2), the answer's included) and
// nothing left in the data dir. Before: 64 GiB written in 87 s; 40 CPU-seconds before a 413.
func TestHostileExpansionUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the built binary")
	}
	t.Logf("load average %s", LoadAverage())
	var bomb bytes.Buffer
	for range 510 {
		if err := zeroFrame(&bomb, 128<<20); err != nil {
			t.Fatal(err)
		}
	}
	inputs := []struct {
		name string
		body []byte
	}{
		{"sparse-64g.img", sparseImage(4096, 1<<24, []sparseChunk{{kind: chunkFill, blocks: 1 << 24, fill: 0xDEADBEEF}})},
		{"zeros.img.zst", bomb.Bytes()},
	}
	if n := len(inputs[0].body); n != 44 {
		t.Fatalf("the sparse image is %d bytes, want 44", n)
	}
	e := newEnv(t)
	p := freshServer(t, e)
	pid := p.cmd.Process.Pid
	for _, in := range inputs {
		io0, err := ReadProcIO(pid)
		if err != nil {
			t.Fatal(err)
		}
		var resp string
		st := measure(t, pid, func() (int, int64) {
			code, body, err := postBytes(p.url, "/api/images?name="+url.QueryEscape(in.name), in.body)
			if err != nil {
				t.Fatal(err)
			}
			resp = body
			return code, int64(len(body))
		})
		io1, _ := ReadProcIO(pid)
		wrote := io1.WChar - io0.WChar
		t.Logf("%s (%d bytes): %v; the server wrote %d bytes (write(2), the answer included), %d to storage: %s",
			in.name, len(in.body), st, wrote, io1.WriteBytes-io0.WriteBytes, strings.TrimSpace(resp))
		if st.code != http.StatusBadRequest || !strings.Contains(resp, "F2FS") {
			t.Errorf("%s: %d %s; want 400, not an F2FS image", in.name, st.code, resp)
		}
		if st.cpu >= time.Second || wrote >= 1<<20 {
			t.Errorf("%s: %v of server CPU, %d bytes written; want under 1 s and 1 MiB", in.name, st.cpu, wrote)
		}
		e.checkClean(t, "after "+in.name, true)
		if l := p.list(t); len(l) != 1 {
			t.Errorf("after %s: %d images listed, want the demo only", in.name, len(l))
		}
	}
}
