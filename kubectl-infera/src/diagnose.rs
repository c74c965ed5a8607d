//! Why is it not ready? Pure explanations from pods and warning events.
