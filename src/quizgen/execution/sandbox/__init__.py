"""The sandbox every snippet runs in: bubblewrap with seccomp, and Landlock inside each job."""
