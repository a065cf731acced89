package api

import "github.com/strata-broker/strata/internal/sasl"

// scramMechanisms maps Kafka's ScramMechanism ids (KIP-554) to their names.
var scramMechanisms = map[int8]string{1: sasl.ScramSHA256, 2: sasl.ScramSHA512}

// scramMechanismID is the id of a SCRAM mechanism name, 0 (UNKNOWN) if none.
func scramMechanismID(name string) int8 {
	for id, n := range scramMechanisms {
		if n == name {
			return id
		}
	}
	return 0
}
