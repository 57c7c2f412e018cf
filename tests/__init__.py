"""Tests of the Pacerelle integration."""
