// Package server is Strata's network edge: it accepts TCP connections, splits
// the byte stream into Kafka frames, decodes each request with kmsg, hands it
// to a Handler that the server declares (the api package implements it; this
// package does not know api), and writes the responses back.
//
// # Framing
//
// A frame is a 4-byte big-endian size followed by that many bytes. A size
// below zero or above Options.MaxRequestBytes closes the connection before
// anything is allocated. The request header is v1 (api key, version,
// correlation id, nullable client id) or v2 (v1 + tagged fields) when the
// request is flexible at its version; the response header is v0 (correlation
// id) or v1 (+ tagged fields) when the response is flexible, except that
// ApiVersions responses always use header v0 (Kafka's rule, so that a client
// can parse the answer before it knows what the broker speaks). The
// ControlledShutdown v0 header (no client id) is not supported.
//
// # What closes a connection
//
// Every one of these closes only the offending connection; the broker keeps
// serving the others: an oversized or negative frame size (logged once at
// warn), a truncated or garbage header, an unknown api key, a known key at a
// version that Handler.Supported rejects (except ApiVersions, below), a body
// that kmsg cannot decode, a read or write error, a connection that stays idle
// (nothing read, nothing in flight) for Options.IdleTimeout, and a Reply with
// Close set.
//
// # Connection limits and socket buffers
//
// The Servers of one broker (one per listener) may share a ConnLimits,
// which counts their connections and applies Kafka's limits. A connection
// whose address already has max.connections.per.ip of them (or its
// override; an override of 0 refuses the address) is closed as soon as it
// is accepted, on every listener, and logged at info (at most one line a
// second). While max.connections connections are open, the listeners other
// than the inter-broker one (Options.InterBroker) stop calling Accept until
// one closes, as Kafka's acceptor blocks; the newcomers wait in the
// kernel's backlog. Addresses are counted with IPv4-mapped IPv6 unmapped.
// A connection's slot is taken after Accept and given back exactly once,
// when its writer goroutine ends (every closing path leads there) or when
// the server refuses it at once for closing; Shutdown returns after every
// slot of its connections is back.
//
// Options.SendBufferBytes and ReceiveBufferBytes, when positive, size the
// kernel buffers of each accepted TCP connection before any TLS wrapping;
// a failure is logged at warn and the connection served anyway.
//
// # TLS and SASL
//
// With Options.TLS every connection is TLS: the handshake completes (within
// the idle timeout) before the first frame is read, and spliced file ranges
// are copied through a pooled buffer, since sendfile cannot encrypt.
//
// With Options.SASL every connection carries a sasl.Session (ConnInfo.SASL)
// that the handler drives with SaslHandshake and SaslAuthenticate. Until it
// has authenticated, the server lets through only what Kafka does (before
// a mechanism is chosen: ApiVersions and SaslHandshake; while the exchange
// is pending: SaslAuthenticate) and closes the connection on anything
// else, and a frame may be at most 512 KiB (Kafka's
// sasl.server.max.receive.size). A failed authentication is answered, and
// the handler closes the connection with Reply.Close.
//
// # Unsupported ApiVersions versions
//
// Kafka answers an ApiVersions request at a version it does not know with an
// ApiVersions v0 response carrying UNSUPPORTED_VERSION (35) and the supported
// list, so that the client can retry at a version both sides speak. The
// server does not know the list; it calls Handler.Handle with an
// ApiVersionsRequest at version 0 (Request.Version is 0, the client's real
// version is not decoded), then sets ErrorCode 35 on the returned
// *kmsg.ApiVersionsResponse and writes it at version 0.
//
// # The Handler contract
//
//   - Handle runs serially per connection, in request order, on the
//     connection's reader goroutine; requests from one connection therefore
//     reach the layers below in the order the client sent them.
//   - A Reply carries exactly one of Resp or Wait, or NoResponse, or only
//     Close. The writer goroutine calls Wait (exactly once, in request order,
//     even if the connection has died meanwhile, so that the handler's
//     resources are released); while a Wait blocks, later requests on the
//     connection are still decoded and handled (pipelining), and responses go
//     out strictly in request order. At most Options.MaxInFlightPerConn
//     replies are pending per connection; the reader blocks beyond that.
//   - The ctx given to Handle is cancelled when the connection is torn down
//     (client gone, protocol error, or a Shutdown whose deadline passed). Wait
//     must return promptly once that ctx is done; Shutdown relies on it.
//   - The server sets the response's version to the request's version and
//     writes it with the right header; a response for another api key, a nil
//     response from Wait, or an empty Reply is a handler bug: it is logged at
//     error and the connection is closed.
//   - Request.Body may alias the frame buffer (kmsg decodes byte fields, such
//     as produce records, without copying). The buffer is reused once the
//     response has been written (after Wait returns); a handler that keeps
//     bytes beyond that must copy them. Request.ClientID may be shared between
//     requests of one connection and must not be modified.
//
// # Shutdown
//
// Shutdown stops accepting, stops reading new requests, lets every request
// already read finish and its response be written, then closes the
// connections. If its ctx ends first, the connections' contexts are cancelled
// and the sockets closed; Shutdown still waits for the server's goroutines
// (which ends once pending Wait calls return) so that none is left behind.
// Cancelling the ctx given to Serve is the same hard stop.
//
// Deadlines on sockets are wall-clock by nature (net.Conn), so the idle
// timeout uses time.Now rather than an injected clock.
package server
