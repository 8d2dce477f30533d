//go:build js && wasm

package main

import (
	"context"
	"errors"
	"syscall/js"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/web"
)

// localPrefix starts the id of an image opened from the user's computer; the rest is the first 16
// hex digits of its [imgio.Fingerprint], so a permalink names the same file after a reload.
const localPrefix = "local-"

// registerLocal sets zrviz.openLocal(file): the service worker calls it with the File a page sent
// (static/site/sw.js, message type 'zrviz-open'). It returns a Promise resolving to {id, name} once
// the image is open in srv, or rejecting with an Error whose message says what is wrong and where
// (imgio's errors name the structure and the byte offset). The file is read through Blob.slice,
// lazily for raw and Android sparse images, and never leaves the browser.
func registerLocal(srv *web.Server, zrviz js.Value) {
	cache := newChunkCache(blobCacheChunks)
	// The js.Func lives as long as the worker: it is never released.
	zrviz.Set("openLocal", js.FuncOf(func(_ js.Value, args []js.Value) any {
		var file js.Value
		if len(args) > 0 {
			file = args[0]
		}
		return newPromise(func() (any, error) {
			id, name, err := openLocal(context.Background(), srv, cache, file)
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": id, "name": name}, nil
		})
	}))
}

// openLocal opens file (a Blob or File) in srv, or finds it there already, and returns its id and
// name. Its small reads are cached in cache.
func openLocal(ctx context.Context, srv *web.Server, cache *chunkCache, file js.Value) (id, name string, err error) {
	if file.Type() != js.TypeObject || file.Get("slice").Type() != js.TypeFunction || file.Get("size").Type() != js.TypeNumber {
		return "", "", errors.New("zrviz: openLocal needs a File (or Blob) to read")
	}
	name = "local image"
	if n := file.Get("name"); n.Type() == js.TypeString && n.String() != "" {
		name = n.String()
	}
	size := int64(file.Get("size").Float())
	r := newBlobReaderAt(file, size, cache)
	fp, err := imgio.Fingerprint(r, size)
	if err != nil {
		return "", "", err
	}
	id = localPrefix + fp[:16]
	if known, ok := srv.LocalImage(id); ok {
		return id, known, nil
	}
	img, err := imgio.OpenAt(ctx, r, size, name, nil)
	if err != nil {
		return "", "", err
	}
	if _, err := srv.AddImage(id, name, img); err != nil {
		img.Close()
		// Opened twice at once: the other open won, and it is the same content.
		if known, ok := srv.LocalImage(id); ok {
			return id, known, nil
		}
		return "", "", err
	}
	return id, name, nil
}

// newPromise returns a JavaScript Promise settled by work, run on a goroutine of its own so that
// it may block on other Promises (a js.Func callback must return before the event loop runs them).
func newPromise(work func() (any, error)) js.Value {
	var executor js.Func
	executor = js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			v, err := work()
			if err != nil {
				reject.Invoke(js.Global().Get("Error").New(err.Error()))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	// The executor runs synchronously inside the constructor; it is not needed after.
	p := js.Global().Get("Promise").New(executor)
	executor.Release()
	return p
}
