package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/sasl"
)

// SaslHandshake: v0-1. After v1 SaslAuthenticate carries the exchange;
// after v0 the client sends bare SASL tokens, which the server answers from
// the same session (librdkafka needs v0 advertised to use SASL at all). On
// a listener without SASL it answers ILLEGAL_SASL_STATE, as Kafka does. An unsupported mechanism or a handshake out of turn is
// answered with the enabled mechanisms, then the connection is closed.
func init() { register(17, 0, 1, (*Handler).handleSaslHandshake) }

func (h *Handler) handleSaslHandshake(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.SASLHandshakeRequest)
	resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
	if req.SASL == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return done(resp)
	}
	resp.SupportedMechanisms = req.SASL.Mechanisms()
	if err := req.SASL.Handshake(r.Mechanism); err != nil {
		resp.ErrorCode, _ = saslFailure(err)
		return Reply{Resp: resp, Close: true}
	}
	return done(resp)
}

// saslFailure is the Kafka error code and message of a failed SASL step.
func saslFailure(err error) (int16, string) {
	var se *sasl.Error
	if errors.As(err, &se) {
		return se.Code, se.Message
	}
	return kerr.SaslAuthenticationFailed.Code, err.Error()
}
