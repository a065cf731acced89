package clientmetrics

import "testing"

func TestDescribedValue(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{ConfigMetrics, " org.apache.kafka.producer. , org.apache.kafka.consumer.", "org.apache.kafka.producer.,org.apache.kafka.consumer."},
		{ConfigMetrics, "", ""},
		{ConfigMetrics, "*", "*"},
		{ConfigMatch, "client_id = a.*,client_software_name=java", "client_id = a.*,client_software_name=java"},
		{ConfigIntervalMs, " +1000 ", "1000"},
		{ConfigIntervalMs, "x", "x"},
		{"other", " a ", " a "},
	} {
		if got := DescribedValue(tc.key, tc.value); got != tc.want {
			t.Errorf("DescribedValue(%q, %q) = %q, want %q", tc.key, tc.value, got, tc.want)
		}
	}
}
