"""Placeholder replaced below."""
def main():
    pass
