// Command zrviz-wasm is the zrviz server built for the browser: `zrviz site DIR` compiles it with
// GOOS=js GOARCH=wasm into DIR/zrviz.wasm, which the static site's service worker (static/site/sw.js)
// runs. Every page and API request the site's pages make is answered by the same handlers as
// `zrviz serve` ([web.Server] with [web.Config].Static), and the player's protocol runs over a
// MessagePort instead of a websocket (web/transport.go). Images come from the embedded demo and
// from files the user opens on their own machine, read in place and never sent anywhere.
package main
