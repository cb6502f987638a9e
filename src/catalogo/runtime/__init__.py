"""What runs the service: settings (the only place the environment is read), logs, metrics,
and Granian's processes (serving.py). May import the domain only."""
