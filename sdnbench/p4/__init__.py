"""P4 programs sdnbench ships for bmv2 and a P4Runtime client that installs and drives them."""
