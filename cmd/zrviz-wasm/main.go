//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall/js"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/web"
)

func main() {
	zrviz := js.Global().Get("Object").New()
	srv, err := web.NewServer(web.Config{Static: true})
	if err != nil {
		zrviz.Set("error", err.Error())
		js.Global().Set("zrviz", zrviz)
		return
	}
	demo, err := imgio.OpenDemoMemory(nil)
	if err == nil {
		_, err = srv.AddImage(web.DemoID, "demo.img", demo)
	}
	if err != nil {
		zrviz.Set("error", "the demo image: "+err.Error())
	}
	registerLocal(srv, zrviz)
	h := srv.Handler()
	zrviz.Set("serve", js.FuncOf(func(_ js.Value, args []js.Value) any { return serve(h, args[0]) }))
	zrviz.Set("connect", js.FuncOf(func(_ js.Value, args []js.Value) any {
		connect(h, args[0].String(), args[1])
		return nil
	}))
	js.Global().Set("zrviz", zrviz)
	select {} // the service worker calls in for as long as it lives
}

// siteHost is the Host every request carries: the handlers answer one origin, the service worker's,
// which forwards only its own origin's requests, so the page's real host does not matter here.
const siteHost = "localhost"

// newRequest makes the handler's request for a path and query ("/images/demo/run?…").
func newRequest(ctx context.Context, method, target string, body io.Reader) (*http.Request, error) {
	if !strings.HasPrefix(target, "/") {
		return nil, fmt.Errorf("zrviz-wasm: %q is not a path", target)
	}
	r, err := http.NewRequestWithContext(ctx, method, "http://"+siteHost+target, body)
	if err != nil {
		return nil, err
	}
	r.RemoteAddr = "127.0.0.1:0"
	r.RequestURI = target
	return r, nil
}

// serve answers one request the service worker forwards, {method, url (path and query), headers:
// [[name, value]…], body: Uint8Array|null}, with a Promise of {status, headers, body: Uint8Array}.
// The handler runs on its own goroutine: a js.Func callback must not block.
func serve(h http.Handler, req js.Value) js.Value {
	method, target := req.Get("method").String(), req.Get("url").String()
	var body []byte
	if b := req.Get("body"); b.Truthy() {
		body = make([]byte, b.Get("length").Int())
		js.CopyBytesToGo(body, b)
	}
	var headers [][2]string
	if hs := req.Get("headers"); hs.Truthy() {
		for i := range hs.Length() {
			headers = append(headers, [2]string{hs.Index(i).Index(0).String(), hs.Index(i).Index(1).String()})
		}
	}
	return newPromise(func() (any, error) {
		r, err := newRequest(context.Background(), method, target, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for _, kv := range headers {
			r.Header.Add(kv[0], kv[1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		res := js.Global().Get("Object").New()
		res.Set("status", rec.Code)
		hs := js.Global().Get("Array").New()
		for name, vs := range rec.Header() {
			for _, v := range vs {
				hs.Call("push", js.ValueOf([]any{name, v}))
			}
		}
		res.Set("headers", hs)
		b := rec.Body.Bytes()
		arr := js.Global().Get("Uint8Array").New(len(b))
		js.CopyBytesToJS(arr, b)
		res.Set("body", arr)
		return res, nil
	})
}
