"""Jinja SQL templates: one statement skeleton per operation kind, shipped as package data."""
