package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/web"
)

// TestCrossSiteEveryAction fills what TestCrossSiteAndRebinding leaves to web's own tests (issue 13
// item 5): every state-changing route refuses a hostile page's simple request (a text/plain POST or
// a DELETE with a foreign Origin) with 403 and changes nothing; a DNS-rebinding page cannot open
// either websocket even with an Origin that matches its own Host (421 before the upgrade), and a
// foreign Origin cannot follow a room (403).
func TestCrossSiteEveryAction(t *testing.T) {
	ls := startServer(t, web.Config{})
	port := ls.url[strings.LastIndexByte(ls.url, ':')+1:]
	evil := http.Header{"Origin": {"http://evil.example"}, "Content-Type": {"text/plain"}, "Sec-Fetch-Site": {"cross-site"}}
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/images?name=x.img", "not even an image"},
		{http.MethodDelete, "/api/images/demo", ""},
		{http.MethodPost, "/api/sandbox", `{"slots":"7200-7263","mode":"both"}`},
		{http.MethodPost, "/api/images/demo/traces", "22528 2\n"},
	} {
		req, _ := http.NewRequest(tc.method, ls.url+tc.path, strings.NewReader(tc.body))
		req.Header = evil.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || !bytes.HasPrefix(b, []byte(`{"error":`)) {
			t.Errorf("cross-site %s %s: %d %.100s, want 403 with the JSON error", tc.method, tc.path, res.StatusCode, b)
		}
	}
	if ids := ls.imageIDs(t); len(ids) != 1 || ids[0] != web.DemoID {
		t.Errorf("images after the attacks: %v, want the demo", ids)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A rebinding page: its own name as Host, its own origin (which matches that Host).
	run := url.Values{"image": {web.DemoID}, "path": {"/cases/tiny.txt"}}.Encode()
	for _, path := range []string{"/ws/run?" + run, "/ws/follow?code=abcdefgh"} {
		c, br, err := rawWSHost(strings.TrimPrefix(ls.url, "http://"), path, "evil.example:"+port, "http://evil.example:"+port)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("rebinding websocket %s: %d, want 421", path, res.StatusCode)
		}
	}
	// A foreign page following a room: a presenter starts one, a page of another origin may not
	// follow it, the presenter's own origin may.
	u := ls.wsURL(url.Values{"image": {web.DemoID}, "path": {"/cases/tiny.txt"}})
	pres, _, err := dialViewer(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pres.c.CloseNow()
	if err := pres.send(ctx, `{"type":"room"}`); err != nil {
		t.Fatal(err)
	}
	var code string
	for code == "" {
		_, b, err := pres.c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Type, Code string }
		json.Unmarshal(b, &m)
		if m.Type == "room" {
			code = m.Code
		}
	}
	follow := "ws" + strings.TrimPrefix(ls.url, "http") + "/ws/follow?code=" + code
	if _, res, err := dialViewer(ctx, follow, http.Header{"Origin": {"http://evil.example"}}); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site follow of room %s: %v %v, want 403", code, res, err)
	}
	f, _, err := dialViewer(ctx, follow, http.Header{"Origin": {ls.url}})
	if err != nil {
		t.Fatalf("same-origin follow: %v", err)
	}
	f.c.CloseNow()
}

// rawWSHost opens a websocket handshake on addr with the given Host and Origin headers and returns
// the connection with its reader positioned at the answer.
func rawWSHost(addr, path, host, origin string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, host, origin)
	return c, bufio.NewReader(c), nil
}
