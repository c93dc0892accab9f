# Conveniences for developers; the quick start itself needs only python3 (quickstart.py).
.PHONY: demo test

demo:
	python3 quickstart.py demo

test:
	python3 quickstart.py test
