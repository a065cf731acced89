package config

import (
	"fmt"
	"strings"
)

// prefixedListener is the listener a listener.name.<listener>.* key names
// (keyName: its name in lower case, as such keys have it); when there is
// none, an *Error naming the key, its value as shown, and the listeners
// there are.
func (b *Broker) prefixedListener(key, value, keyName string) (Listener, error) {
	for _, l := range b.Listeners {
		if strings.ToLower(l.Name) == keyName {
			return l, nil
		}
	}
	return Listener{}, &Error{Key: key, Value: value,
		Msg: fmt.Sprintf("names listener %s, which listeners (%s) does not have", strings.ToUpper(keyName), listenersString(b.Listeners))}
}

// prefixedSASLListener is prefixedListener for a key only a SASL listener
// takes (a JAAS config, an OAUTHBEARER setting).
func (b *Broker) prefixedSASLListener(key, value, keyName string) (Listener, error) {
	l, err := b.prefixedListener(key, value, keyName)
	if err == nil && !l.UsesSASL() {
		err = &Error{Key: key, Value: value,
			Msg: fmt.Sprintf("names listener %s, whose protocol is %s, not SASL_PLAINTEXT or SASL_SSL", l.Name, l.Protocol)}
	}
	return l, err
}
