package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SaslAuthenticate: v0-2. Each request carries one step of the exchange
// chosen by SaslHandshake. A failed step is answered with its error
// (SASL_AUTHENTICATION_FAILED and Kafka's message for wrong credentials),
// then the connection is closed. Re-authentication (KIP-368) is not
// offered: session_lifetime_ms is 0, so clients never re-authenticate.
func init() { register(36, 0, 2, (*Handler).handleSaslAuthenticate) }

func (h *Handler) handleSaslAuthenticate(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.SASLAuthenticateRequest)
	resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if req.SASL == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		resp.ErrorMessage = strPtr("this listener does not use SASL")
		return done(resp)
	}
	reply, err := req.SASL.Authenticate(r.SASLAuthBytes)
	if err != nil {
		code, msg := saslFailure(err)
		resp.ErrorCode, resp.ErrorMessage = code, strPtr(msg)
		h.logger.Info("SASL authentication failed", "client", req.ClientHost, "listener", req.Listener, "err", err)
		return Reply{Resp: resp, Close: true}
	}
	resp.SASLAuthBytes = reply
	if resp.SASLAuthBytes == nil {
		resp.SASLAuthBytes = []byte{}
	}
	return done(resp)
}
