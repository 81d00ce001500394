#!/bin/bash
#SBATCH -J hy3d-diff-4x4
#SBATCH -N 4                           # <-- NODES (edit to 1/2/4 as needed)
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:4                   # <-- 4 GPUs per node
#SBATCH --constraint=gpu80
#SBATCH --cpus-per-task=16
#SBATCH --mem=32G
#SBATCH -t 01:00:00
#SBATCH -o logs_diffusion/%x-%j.out
