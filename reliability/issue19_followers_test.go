package reliability

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/klauspost/compress/zstd"
)

// TestSlowFollowersBinary (issue 19): 100 followers of a room on a 206,509-slot file (issue 13's rows
// layout: every slot its own extent) each ask for 20 pages of 16,384 extents (about 1 MB of JSON
// each) and read nothing, under --max-memory 256MiB. Their queued replies are charged to the budget
// and a follower whose queue is full, or does not fit, is dropped (1008), so the process stays within
// the RSS at start + the budget + budgetSlack. Before: 100 of them 1,078 MB (6.4 MB charged).
func TestSlowFollowersBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a many-slots upload and 100 websocket followers")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "big.bin"), bytes.Repeat([]byte("many-slots"), 820), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := mkfsImage(t, dir, 3<<10, src)
	if _, err := BuildManySlots(raw, manySlotsPath, 200, LayoutRows); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	if err := WriteZstd(raw, &z, zstd.SpeedBestCompression); err != nil {
		t.Fatal(err)
	}
	s := startBinServer(t, "-max-memory", fmt.Sprintf("%dMiB", budgetMiB))
	pid := s.cmd.Process.Pid
	m, err := ReadProcMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	start := m.RSS
	up := uploadTo(t, s.base, "many.img.zst", z.Bytes())

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, _, err := websocket.Dial(ctx, s.ws("/ws/run?image="+up.ID+"&path="+manySlotsPath+"&mode=both"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.CloseNow()
	p.SetReadLimit(64 << 20)
	readType := func(typ string) map[string]any {
		for {
			var msg map[string]any
			_, b, err := p.Read(ctx)
			if err != nil {
				t.Fatalf("presenter read %s: %v", typ, err)
			}
			if jsonUnmarshal(b, &msg) == nil && msg["type"] == typ {
				return msg
			}
		}
	}
	readType("hello")
	p.Write(ctx, websocket.MessageText, []byte(`{"type":"room"}`))
	code, _ := readType("room")["code"].(string)
	if code == "" {
		t.Fatal("no room code")
	}
	// The presenter keeps reading (its frames and follower counts), as a live presenter does.
	go func() {
		for {
			if _, _, err := p.Read(ctx); err != nil {
				return
			}
		}
	}()
	addr := strings.TrimPrefix(s.base, "http://")
	dropped := 0
	peakWithin(t, pid, start, "100 followers asking for pages, reading nothing", func() {
		var conns []net.Conn
		for i := range 100 {
			c, _, err := rawWS(addr, "/ws/follow?code="+code)
			if err != nil {
				t.Fatalf("follower %d: %v", i, err)
			}
			conns = append(conns, c)
			for k := range 20 {
				c.Write(maskedText([]byte(fmt.Sprintf(`{"type":"initial","from":%d}`, (k*16384)%200000))))
			}
		}
		time.Sleep(5 * time.Second) // not synchronisation: the time stalled readers take to fill their queues
		// A follower the server dropped has its connection closed: a read ends at once.
		for _, c := range conns {
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			buf := make([]byte, 1<<20)
			for {
				_, err := c.Read(buf)
				if err == nil {
					continue
				}
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					dropped++
				}
				break
			}
			c.Close()
		}
	})
	t.Logf("%d of 100 followers dropped", dropped)
	if dropped == 0 {
		t.Error("no follower was dropped: 2,000 pages of about 1 MB to readers of nothing fit no 256 MiB budget")
	}
	if r, err := http.Get(s.base + "/api/images/demo/run?path=/cases/holes.bin&mode=both"); err != nil || r.StatusCode != http.StatusOK {
		t.Errorf("the run API after the followers left: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}
